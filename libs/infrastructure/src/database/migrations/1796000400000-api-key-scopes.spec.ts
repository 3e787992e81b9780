import { useTestDatabase } from '../../../test/support/real-database';
import { ApiKeyScopes1796000400000 } from './1796000400000-api-key-scopes';

describe('migration ApiKeyScopes1796000400000 (real database)', () => {
  const db = useTestDatabase({ reset: true });

  it('gives existing keys what they could do before (no name, full, no expiry); refuses bad values', async () => {
    const migration = new ApiKeyScopes1796000400000();
    const runner = db.dataSource.createQueryRunner();
    try {
      await migration.down(runner); // the table as it was before
      const [{ id: accountId }] = await runner.query(
        `INSERT INTO accounts (name, role) VALUES ('Ada', 'customer') RETURNING id`,
      );
      await runner.query(
        `INSERT INTO api_keys (account_id, prefix, hash)
         VALUES ($1, 'psk_old', repeat('a', 64)), ($1, 'psk_old', repeat('b', 64))`,
        [accountId],
      );
      await migration.up(runner);
      expect(await runner.query(`SELECT name, scopes, expires_at FROM api_keys ORDER BY id`)).toEqual([
        { name: null, scopes: ['full'], expires_at: null },
        { name: null, scopes: ['full'], expires_at: null },
      ]);
      const insert = (column: string, value: unknown) =>
        runner.query(`INSERT INTO api_keys (account_id, prefix, hash, ${column}) VALUES ($1, 'psk_new', $2, $3)`, [
          accountId,
          'c'.repeat(64),
          value,
        ]);
      await expect(insert('scopes', ['admin'])).rejects.toMatchObject({ constraint: 'api_keys_scopes_check' });
      await expect(insert('scopes', [])).rejects.toMatchObject({ constraint: 'api_keys_scopes_check' });
      await expect(insert('name', '')).rejects.toMatchObject({ constraint: 'api_keys_name_check' });
    } finally {
      await runner.release();
    }
  });
});
