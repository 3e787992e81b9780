import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Orders are kept as records: a cancelled order or one the hold expiry withdrew stays, with its `status`
 * (`placed`, `completed`, `cancelled`, `expired`) and the time that status was reached (`status_changed_at`);
 * `complete` stays as the specification's field and always agrees with the status (a CHECK says so). "Open"
 * now means `status = 'placed'`: the partial indexes over the open orders and the CHECK that an open order
 * names its pet are rebuilt on it. Existing rows: a complete order is `completed`, any other `placed`; their
 * status time is their creation time (one pass over the table). Pets get `created_at`; rows that exist take
 * the time of this migration (PostgreSQL stores it once, without rewriting the table).
 */
export class OrdersAsRecords1796000100000 implements MigrationInterface {
  name = 'OrdersAsRecords1796000100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE orders ADD COLUMN status varchar(16) NOT NULL DEFAULT 'placed',
                                      ADD COLUMN status_changed_at timestamptz`);
    await q.query(`UPDATE orders SET status = CASE WHEN complete THEN 'completed' ELSE 'placed' END,
                                     status_changed_at = created_at`);
    await q.query(`ALTER TABLE orders
      ALTER COLUMN status DROP DEFAULT,
      ALTER COLUMN status_changed_at SET NOT NULL,
      ADD CONSTRAINT orders_status_ck CHECK (status IN ('placed', 'completed', 'cancelled', 'expired')),
      ADD CONSTRAINT orders_complete_status_ck CHECK (complete = (status = 'completed')),
      DROP CONSTRAINT orders_open_has_pet_ck,
      ADD CONSTRAINT orders_open_has_pet_ck CHECK (status <> 'placed' OR pet_id IS NOT NULL)`);
    await q.query(`DROP INDEX orders_open_pet_idx`);
    await q.query(`DROP INDEX orders_open_created_idx`);
    await q.query(`DROP INDEX orders_open_owner_idx`);
    await q.query(`CREATE INDEX orders_open_pet_idx ON orders (pet_id) WHERE status = 'placed'`);
    await q.query(`CREATE INDEX orders_open_created_idx ON orders (created_at, id) WHERE status = 'placed'`);
    await q.query(`CREATE INDEX orders_open_owner_idx ON orders (owner_id) INCLUDE (quantity) WHERE status = 'placed'`);
    // Lists filtered by status, in id order.
    await q.query(`CREATE INDEX orders_status_idx ON orders (status, id)`);
    await q.query(`ALTER TABLE pets ADD COLUMN created_at timestamptz NOT NULL DEFAULT now()`);
  }

  /** Back to orders that are deleted when withdrawn: the withdrawn ones go. */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE pets DROP COLUMN created_at`);
    await q.query(`DELETE FROM orders WHERE status IN ('cancelled', 'expired')`);
    await q.query(`DROP INDEX orders_status_idx`);
    await q.query(`DROP INDEX orders_open_pet_idx`);
    await q.query(`DROP INDEX orders_open_created_idx`);
    await q.query(`DROP INDEX orders_open_owner_idx`);
    await q.query(`ALTER TABLE orders
      DROP CONSTRAINT orders_open_has_pet_ck,
      ADD CONSTRAINT orders_open_has_pet_ck CHECK (complete OR pet_id IS NOT NULL),
      DROP CONSTRAINT orders_complete_status_ck,
      DROP CONSTRAINT orders_status_ck,
      DROP COLUMN status_changed_at,
      DROP COLUMN status`);
    await q.query(`CREATE INDEX orders_open_pet_idx ON orders (pet_id) WHERE NOT complete`);
    await q.query(`CREATE INDEX orders_open_created_idx ON orders (created_at, id) WHERE NOT complete`);
    await q.query(`CREATE INDEX orders_open_owner_idx ON orders (owner_id) INCLUDE (quantity) WHERE NOT complete`);
  }
}
