/**
 * What the catalogue asks of ordering about a pet: how many of its orders are open. The catalogue declares it and
 * knows no order; an adapter on the orders table implements it (PgOpenOrders, bound by the catalogue's module).
 * Exact while the pet's row is locked: every command that opens or closes an order of a pet locks that pet first.
 */
export abstract class OpenOrders {
  /** Open (placed) orders of the pet; 0 for a pet without any, or unknown. */
  abstract countForPet(petId: number): Promise<number>;
}
