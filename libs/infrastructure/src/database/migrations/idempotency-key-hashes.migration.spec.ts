import { keyHash } from '../../persistence/idempotency/pg-idempotency-store.repository';
import { useTestDatabase } from '../../../test/support/real-database';
import { IdempotencyKeyHashes1796000600000 } from './1796000600000-idempotency-key-hashes';

describe('migration IdempotencyKeyHashes1796000600000 (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });

  it('replaces each kept key by the hash the service computes, so its retry is still a replay', async () => {
    const migration = new IdempotencyKeyHashes1796000600000();
    const q = db.dataSource.createQueryRunner();
    await q.startTransaction();
    try {
      // PostgreSQL's DDL is transactional: back to the old table, then forward, all rolled back at the end.
      await migration.down(q);
      const [{ id }] = await q.query(`INSERT INTO accounts (name, role) VALUES ('Old', 'customer') RETURNING id`);
      await q.query(
        `INSERT INTO idempotency_keys (account_id, key, fingerprint, result, created_resource, expires_at)
         VALUES ($1, 'ordre-clé-1', $2, '{"id":7}', '/store/orders/7', now() + interval '1 hour')`,
        [id, 'a'.repeat(64)],
      );
      await migration.up(q);
      const rows = await q.query(`SELECT * FROM idempotency_keys WHERE account_id = $1`, [id]);
      expect(rows).toEqual([
        expect.objectContaining({
          key_hash: keyHash('ordre-clé-1'),
          result: '{"id":7}',
          result_sealed: false,
          created_resource: '/store/orders/7',
        }),
      ]);
      expect(rows[0]).not.toHaveProperty('key');
      // One key per scope, the keys without an account included.
      const anonymous = `INSERT INTO idempotency_keys (account_id, key_hash, fingerprint, result, expires_at)
                         VALUES (NULL, $1, $1, '{}', now() + interval '1 hour')`;
      await q.query(anonymous, ['b'.repeat(64)]);
      await q.query(`SAVEPOINT twice`);
      await expect(q.query(anonymous, ['b'.repeat(64)])).rejects.toThrow(/idempotency_keys_scope_key/);
      await q.query(`ROLLBACK TO SAVEPOINT twice`);
    } finally {
      await q.rollbackTransaction();
      await q.release();
    }
  });
});
