import { Injectable } from '@nestjs/common';
import { IdempotencyRecord, IdempotencyStore } from '@petstore/application';
import { TransactionHost } from '../../database/transaction-host';

/**
 * Idempotency keys in PostgreSQL. The lock is a transaction-scoped advisory lock on
 * (account, key), so it is released by commit or rollback, even if the process dies.
 */
@Injectable()
export class PgIdempotencyStore extends IdempotencyStore {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async tryLock(accountId: number, key: string): Promise<boolean> {
    if (!this.host.inTransaction) throw new Error('IdempotencyStore.tryLock needs a transaction (UnitOfWork.run).');
    const rows = await this.host.query<{ locked: boolean }>(
      `SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, 0)) AS locked`,
      [accountId, key],
    );
    return rows[0].locked;
  }

  async find(accountId: number, key: string, now: Date): Promise<IdempotencyRecord | null> {
    type Row = { fingerprint: string; result: string; created_resource: string | null };
    const rows = await this.host.query<Row>(
      `SELECT fingerprint, result, created_resource
         FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND expires_at > $3`,
      [accountId, key, now],
    );
    if (!rows.length) return null;
    const row = rows[0];
    return { fingerprint: row.fingerprint, result: { json: row.result, createdResource: row.created_resource } };
  }

  async save(accountId: number, key: string, record: IdempotencyRecord, expiresAt: Date): Promise<void> {
    // An expired record under the same key is replaced. The result is text, stored as given.
    await this.host.query(
      `INSERT INTO idempotency_keys (account_id, key, fingerprint, result, created_resource, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (account_id, key) DO UPDATE SET
         fingerprint = EXCLUDED.fingerprint, result = EXCLUDED.result, created_resource = EXCLUDED.created_resource,
         created_at = now(), expires_at = EXCLUDED.expires_at`,
      [accountId, key, record.fingerprint, record.result.json, record.result.createdResource, expiresAt],
    );
  }

  async purgeExpired(now: Date): Promise<number> {
    const { affected } = await this.host.execute(`DELETE FROM idempotency_keys WHERE expires_at <= $1`, [now]);
    return affected;
  }
}
