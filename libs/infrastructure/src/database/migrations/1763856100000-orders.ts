import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Customers' orders. An open order always names its pet; a completed one outlives a deleted pet
 * as history (`pet_id` becomes NULL). The CHECK is the database's half of I6: deleting a pet that
 * still has open orders fails here even if a use case forgot to ask.
 *
 * Its timestamp follows PetsAndInventory1763856000000: migrations run in timestamp order and
 * `orders.pet_id` references `pets`.
 */
export class Orders1763856100000 implements MigrationInterface {
  name = 'Orders1763856100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE orders (
        id            bigserial   PRIMARY KEY,
        pet_id        bigint      REFERENCES pets(id) ON DELETE SET NULL,
        owner_id      bigint      NOT NULL REFERENCES accounts(id),
        quantity      integer     NOT NULL CHECK (quantity BETWEEN 1 AND 1000),
        ship_date     timestamptz,
        complete      boolean     NOT NULL DEFAULT false,
        created_at    timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT orders_open_has_pet_ck CHECK (complete OR pet_id IS NOT NULL)
      )`);
    // Open orders of a pet: counted by every stock command.
    await q.query(`CREATE INDEX orders_open_pet_idx ON orders (pet_id) WHERE NOT complete`);
    await q.query(`CREATE INDEX orders_pet_idx ON orders (pet_id, id)`);
    await q.query(`CREATE INDEX orders_owner_idx ON orders (owner_id, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE orders`);
  }
}
