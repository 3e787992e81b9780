import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Indexes over the open orders for the order-hold rules: the expiry job looks up the open orders
 * placed before a time (`created_at`), and placing an order sums the units of the customer's open
 * orders (`owner_id`, with `quantity` in the index so the sum reads no table rows).
 */
export class OpenOrderIndexes1764000100000 implements MigrationInterface {
  name = 'OpenOrderIndexes1764000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX orders_open_created_idx ON orders (created_at, id) WHERE NOT complete`);
    await q.query(`CREATE INDEX orders_open_owner_idx ON orders (owner_id) INCLUDE (quantity) WHERE NOT complete`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX orders_open_owner_idx`);
    await q.query(`DROP INDEX orders_open_created_idx`);
  }
}
