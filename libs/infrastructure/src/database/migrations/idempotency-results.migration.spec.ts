import { useTestDatabase } from '../../../test/support/real-database';
import { IdempotencyResults1764000300000 } from './1764000300000-idempotency-results';
import { IdempotencyKeyHashes1796000600000 } from './1796000600000-idempotency-key-hashes';

describe('migration IdempotencyResults1764000300000 (real PostgreSQL)', () => {
  const db = useTestDatabase({ reset: true });

  it('keeps a key stored as an HTTP response readable as a result, so its retry is still a replay', async () => {
    const migration = new IdempotencyResults1764000300000();
    const q = db.dataSource.createQueryRunner();
    await q.startTransaction();
    try {
      // PostgreSQL's DDL is transactional: back to the old table, then forward, all rolled back at the end.
      await new IdempotencyKeyHashes1796000600000().down(q);
      await migration.down(q);
      const order = { id: 7, petId: 3, quantity: 1 };
      const [{ id }] = await q.query(`INSERT INTO accounts (name, role) VALUES ('Old', 'customer') RETURNING id`);
      await q.query(
        `INSERT INTO idempotency_keys
           (account_id, key, fingerprint, response_status, response_body, response_headers, expires_at)
         VALUES ($1, 'old-key', $2, 201, $3, $4, now() + interval '1 hour')`,
        [id, 'a'.repeat(64), JSON.stringify(order), JSON.stringify({ location: '/store/orders/7' })],
      );
      await migration.up(q);
      const rows = await q.query(`SELECT key, result, created_resource FROM idempotency_keys WHERE account_id = $1`, [
        id,
      ]);
      expect(rows).toEqual([{ key: 'old-key', result: expect.any(String), created_resource: '/store/orders/7' }]);
      expect(JSON.parse(rows[0].result)).toEqual(order);
    } finally {
      await q.rollbackTransaction();
      await q.release();
    }
  });
});
