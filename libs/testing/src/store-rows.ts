import { Client } from 'pg';

/**
 * The store's rows as the database holds them, read with SQL beside the code under test: what the medium tier's store
 * tests check the use cases' answers against, and the HTTP tests' StoreFixtures the API's.
 */
export class StoreRows {
  private constructor(readonly db: Client) {}

  static async on(url: string): Promise<StoreRows> {
    const db = new Client({ connectionString: url });
    await db.connect();
    return new StoreRows(db);
  }

  close(): Promise<void> {
    return this.db.end();
  }

  /** The pet's stock row and status. */
  async stock(petId: number): Promise<{ quantity: number; status: string }> {
    const { rows } = await this.db.query(
      'SELECT i.quantity, p.status FROM stock i JOIN pets p ON p.id = i.pet_id WHERE i.pet_id = $1',
      [petId],
    );
    if (rows.length !== 1) throw new Error(`pet ${petId} has no stock row`);
    return { quantity: rows[0].quantity, status: rows[0].status };
  }

  /** Orders of the pet: open (placed), completed and withdrawn (cancelled, expired); counts, units. */
  async ordersOf(petId: number): Promise<{
    open: number;
    completed: number;
    withdrawn: number;
    openUnits: number;
    completedUnits: number;
    withdrawnUnits: number;
  }> {
    const { rows } = await this.db.query(
      `SELECT count(*) FILTER (WHERE status = 'placed')::int AS open,
              count(*) FILTER (WHERE status = 'completed')::int AS completed,
              count(*) FILTER (WHERE status IN ('cancelled', 'expired'))::int AS withdrawn,
              coalesce(sum(quantity) FILTER (WHERE status = 'placed'), 0)::int AS "openUnits",
              coalesce(sum(quantity) FILTER (WHERE status = 'completed'), 0)::int AS "completedUnits",
              coalesce(sum(quantity) FILTER (WHERE status IN ('cancelled', 'expired')), 0)::int AS "withdrawnUnits"
         FROM orders WHERE pet_id = $1`,
      [petId],
    );
    return rows[0];
  }

  /** Every order in the database. */
  async orderCount(): Promise<number> {
    const { rows } = await this.db.query('SELECT count(*)::int AS n FROM orders');
    return rows[0].n;
  }
}
