/** How much a customer may hold in open orders, and how long (from the configuration). */
export class OrderHoldSettings {
  constructor(
    /** Units one customer may hold in open orders; 0 = no limit. Administrators are exempt. */
    readonly maxOpenUnitsPerCustomer: number,
    /** An order still open this many minutes after it was placed is cancelled by the service. */
    readonly holdMinutes: number,
  ) {}
}
