import { useTestDatabase } from '../../../test/support/real-database';
import { BootstrapApiKeys1764000200000 } from './1764000200000-bootstrap-api-keys';

describe('migration BootstrapApiKeys1764000200000 (real database)', () => {
  const db = useTestDatabase({ reset: true });

  it('marks the first key of each administrator (the ADMIN_API_KEY ones) as bootstrap keys, and no other', async () => {
    const migration = new BootstrapApiKeys1764000200000();
    const runner = db.dataSource.createQueryRunner();
    try {
      await migration.down(runner); // the table as it was before
      const accounts = await runner.query(
        `INSERT INTO accounts (name, role)
         VALUES ('Administrator', 'admin'), ('Administrator', 'admin'), ('Ada', 'customer') RETURNING id`,
      );
      const [first, second, customer] = accounts.map((a: { id: string }) => Number(a.id));
      const keys = await runner.query(
        `INSERT INTO api_keys (account_id, prefix, hash)
         SELECT account_id, 'psk_test', md5(n::text) || md5(n::text)
           FROM unnest($1::bigint[]) WITH ORDINALITY AS t(account_id, n)
         RETURNING id, account_id`,
        [[first, first, second, customer, customer]],
      );
      await migration.up(runner);
      const rows = await runner.query(`SELECT id, bootstrap FROM api_keys ORDER BY id`);
      const ids = keys.map((k: { id: string }) => Number(k.id));
      expect(rows.map((r: { id: string; bootstrap: boolean }) => [Number(r.id), r.bootstrap])).toEqual([
        [ids[0], true],
        [ids[1], false],
        [ids[2], true],
        [ids[3], false],
        [ids[4], false],
      ]);
    } finally {
      await runner.release();
    }
  });
});
