import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Marks the keys issued for ADMIN_API_KEY, so that a different ADMIN_API_KEY can revoke the previous
 * one. Administrators have only ever come from ADMIN_API_KEY, each with that key as its first key:
 * those are marked. (Look-ups by hash use the unique index on api_keys.hash that exists already.)
 */
export class BootstrapApiKeys1764000200000 implements MigrationInterface {
  name = 'BootstrapApiKeys1764000200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN bootstrap boolean NOT NULL DEFAULT false`);
    await q.query(`
      UPDATE api_keys SET bootstrap = true
       WHERE id IN (SELECT min(k.id) FROM api_keys k JOIN accounts a ON a.id = k.account_id
                     WHERE a.role = 'admin' GROUP BY k.account_id)`);
    await q.query(`CREATE INDEX api_keys_bootstrap_idx ON api_keys (id) WHERE bootstrap`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys DROP COLUMN bootstrap`);
  }
}
