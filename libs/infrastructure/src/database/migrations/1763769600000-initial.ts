import { MigrationInterface, QueryRunner } from 'typeorm';

/** Accounts, API keys and categories: the foundation's tables. */
export class Initial1763769600000 implements MigrationInterface {
  name = 'Initial1763769600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        id          bigserial PRIMARY KEY,
        name        varchar(100) NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
        role        varchar(16)  NOT NULL CHECK (role IN ('admin', 'customer')),
        created_at  timestamptz  NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id            bigserial PRIMARY KEY,
        account_id    bigint      NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
        prefix        varchar(16) NOT NULL,
        hash          char(64)    NOT NULL UNIQUE,
        created_at    timestamptz NOT NULL DEFAULT now(),
        last_used_at  timestamptz,
        revoked_at    timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_account_idx ON api_keys (account_id, id)`);
    await q.query(`
      CREATE TABLE categories (
        id           bigserial PRIMARY KEY,
        name         varchar(100)  NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 100),
        description  varchar(1000)
      )`);
    await q.query(`CREATE UNIQUE INDEX categories_name_lower_uq ON categories (lower(name))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE categories`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE accounts`);
  }
}
