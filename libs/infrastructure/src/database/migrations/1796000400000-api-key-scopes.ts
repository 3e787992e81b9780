import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys with a name, scopes and an expiry (docs/api.md, "Authentication and keys"). Every existing key keeps
 * what it could do: no name, `{full}`, no expiry. Adding a column with a constant default rewrites no row
 * (PostgreSQL 11+); the checks read the table once. The look-up by hash keeps using the unique index on hash.
 */
export class ApiKeyScopes1796000400000 implements MigrationInterface {
  name = 'ApiKeyScopes1796000400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE api_keys
        ADD COLUMN name text,
        ADD COLUMN scopes text[] NOT NULL DEFAULT '{full}',
        ADD COLUMN expires_at timestamptz,
        ADD CONSTRAINT api_keys_name_check CHECK (char_length(name) BETWEEN 1 AND 100),
        ADD CONSTRAINT api_keys_scopes_check
          CHECK (cardinality(scopes) > 0 AND scopes <@ ARRAY['read', 'full']::text[])`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN expires_at, DROP COLUMN scopes, DROP COLUMN name`);
  }
}
