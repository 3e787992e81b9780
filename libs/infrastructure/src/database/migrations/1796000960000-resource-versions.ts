import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What each table's representation shows (the API's schema of its rows): an UPDATE that changes one of these columns
 * advances the row's version; one that changes none (a message's attempts, say) leaves it. `version` itself is never
 * in the list: the trigger owns it.
 */
export const VERSIONED_TABLES = [
  { table: 'categories', shown: ['name', 'description'] },
  { table: 'stock', shown: ['quantity'] },
  { table: 'pets', shown: ['name', 'category_id', 'status', 'created_at'] },
  {
    table: 'orders',
    shown: ['pet_id', 'quantity', 'ship_date', 'status', 'complete', 'created_at', 'status_changed_at'],
  },
  { table: 'messages', shown: ['body', 'status', 'delivered_at'] },
] as const;

/** The trigger's condition: a column the API shows differs (NULL and NULL are the same). */
const changed = (shown: readonly string[]) => {
  const row = (of: 'OLD' | 'NEW') => `(${shown.map((column) => `${of}.${column}`).join(', ')})`;
  return `${row('OLD')} IS DISTINCT FROM ${row('NEW')}`;
};

/**
 * Resource versions (issue 49: webhook deliveries arrive out of order, and a consumer must be able to tell the newer
 * state of a resource): an integer `version` on categories, stock, pets, orders and messages, 1 for every row there
 * is and every row inserted, one more with every UPDATE that changes what the API shows of the row. Kept by the
 * database, not the service: a BEFORE UPDATE trigger per table, so that every writer advances it, the previous
 * release (1.0.0, which knows nothing of the column) and plain SQL included. The service only reads it, and keeps its
 * copy of an aggregate in step (`advanceVersion`) so that the event of a change carries the version stored.
 *
 * A stock entry's representation (`InventoryItem`) also shows its pet's status: an UPDATE of a pet's status advances
 * its stock entry's version too (an AFTER UPDATE trigger on `pets`, which updates the entry's row: a pet's row is
 * always locked before its entry's, in the service and in 1.0.0, so this adds no lock order).
 *
 * An expand step (docs/development.md, "Migrations without downtime"): `ADD COLUMN … NOT NULL DEFAULT 1`, a constant
 * default, changes the catalogue only (no rewrite, no scan: measured at 1,000,000 pets, see CHANGELOG.md), under an
 * ACCESS EXCLUSIVE lock held for milliseconds; `CREATE TRIGGER` takes a SHARE ROW EXCLUSIVE lock as briefly. 1.0.0
 * reads none of these tables with a star select list (expand-rules.spec.ts). Outside a transaction, one statement per
 * table (a DO block: its column and its triggers commit together), so that the migration never holds the lock of one
 * table while it waits for another's, and each statement can run again (IF NOT EXISTS, DROP TRIGGER IF EXISTS).
 * `stock` comes before `pets`, whose trigger writes its `version`.
 */
export class ResourceVersions1796000960000 implements MigrationInterface {
  name = 'ResourceVersions1796000960000';
  readonly servesFrom = '1.0.0';
  readonly transaction = false;

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE OR REPLACE FUNCTION petstore_next_version() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        NEW.version := OLD.version + 1;
        RETURN NEW;
      END $$`);
    await q.query(`CREATE OR REPLACE FUNCTION petstore_pet_status_versions_stock() RETURNS trigger
      LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE stock SET version = version + 1 WHERE pet_id = NEW.id;
        RETURN NULL;
      END $$`);
    for (const { table, shown } of VERSIONED_TABLES) {
      const statusOfPet =
        table === 'pets'
          ? `DROP TRIGGER IF EXISTS pets_status_versions_stock ON pets;
        CREATE TRIGGER pets_status_versions_stock AFTER UPDATE OF status ON pets FOR EACH ROW
          WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION petstore_pet_status_versions_stock();`
          : '';
      await q.query(`DO $$ BEGIN
        ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS version bigint NOT NULL DEFAULT 1;
        DROP TRIGGER IF EXISTS ${table}_version ON ${table};
        CREATE TRIGGER ${table}_version BEFORE UPDATE ON ${table} FOR EACH ROW
          WHEN (${changed(shown)}) EXECUTE FUNCTION petstore_next_version();
        ${statusOfPet}
      END $$`);
    }
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER IF EXISTS pets_status_versions_stock ON pets`);
    for (const { table } of [...VERSIONED_TABLES].reverse()) {
      await q.query(`DROP TRIGGER IF EXISTS ${table}_version ON ${table}`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN IF EXISTS version`);
    }
    await q.query(`DROP FUNCTION IF EXISTS petstore_pet_status_versions_stock()`);
    await q.query(`DROP FUNCTION IF EXISTS petstore_next_version()`);
  }
}
