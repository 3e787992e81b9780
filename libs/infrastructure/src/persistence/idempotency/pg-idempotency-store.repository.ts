import { Injectable, Optional } from '@nestjs/common';
import { IdempotencyOwner, IdempotencyRecord, IdempotencyStore } from '@petstore/application';
import { TransactionHost } from '../../database/transaction-host';
import { IdempotencyKeyPeppers, plainHash } from '../../security/idempotency-key-peppers';

/** A transaction-scoped advisory lock on (owner, key): `$1` the owner (0 for none), `$2` the stored key. */
const TRY_LOCK = `SELECT pg_try_advisory_xact_lock(hashtextextended($1::text || ':' || $2::text, 0)) AS locked`;
/** `$2`: the key as stored under each pepper, the current first (the first found wins). */
const FIND = `SELECT fingerprint, result, created_resource, result_sealed
  FROM idempotency_keys WHERE coalesce(account_id, 0) = $1 AND key_hash = ANY($2::text[]) AND expires_at > $3
  ORDER BY array_position($2::text[], key_hash) LIMIT 1`;
/** An expired record under the same key is replaced. The result is text, stored as given. */
const SAVE = `INSERT INTO idempotency_keys
  (account_id, key_hash, fingerprint, result, result_sealed, created_resource, expires_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7)
  ON CONFLICT ((coalesce(account_id, 0)), key_hash) DO UPDATE SET
  fingerprint = EXCLUDED.fingerprint, result = EXCLUDED.result, result_sealed = EXCLUDED.result_sealed,
  created_resource = EXCLUDED.created_resource, created_at = now(), expires_at = EXCLUDED.expires_at`;
const PURGE_EXPIRED = `DELETE FROM idempotency_keys WHERE expires_at <= $1`;

/** A record of `idempotency_keys` as FIND reads it. */
interface IdempotencyRow {
  fingerprint: string;
  result: string;
  created_resource: string | null;
  result_sealed: boolean;
}

const toRecord = (row: IdempotencyRow): IdempotencyRecord => ({
  fingerprint: row.fingerprint,
  result: { json: row.result, createdResource: row.created_resource },
  sealed: row.result_sealed,
});

/**
 * Idempotency keys in PostgreSQL. The lock is a transaction-scoped advisory lock on
 * (owner, key), so it is released by commit or rollback, even if the process dies.
 *
 * A key is kept as its SHA-256 (`key_hash`), never as sent, or, with IDEMPOTENCY_KEY_PEPPER, as its HMAC under the
 * pepper (IdempotencyKeyPeppers: a record kept under a previous pepper or none is still found); a sealed result's
 * key is derived from the text (HkdfResultSealer). Keys without an owner (operations without an API key) are the
 * account-0 space of the unique index (account ids start at 1).
 */
@Injectable()
export class PgIdempotencyStore extends IdempotencyStore {
  constructor(
    private readonly host: TransactionHost,
    @Optional() private readonly peppers: IdempotencyKeyPeppers = new IdempotencyKeyPeppers(),
  ) {
    super();
  }

  async tryLock(owner: IdempotencyOwner, key: string): Promise<boolean> {
    this.host.requireTransaction('IdempotencyStore.tryLock');
    const rows = await this.host.query<{ locked: boolean }>(TRY_LOCK, [owner ?? 0, this.peppers.current(key)]);
    return rows[0].locked;
  }

  async find(owner: IdempotencyOwner, key: string, now: Date): Promise<IdempotencyRecord | null> {
    const [row] = await this.host.query<IdempotencyRow>(FIND, [owner ?? 0, this.peppers.candidates(key), now]);
    return row ? toRecord(row) : null;
  }

  async save(owner: IdempotencyOwner, key: string, record: IdempotencyRecord, expiresAt: Date): Promise<void> {
    await this.host.query(SAVE, [
      owner,
      this.peppers.current(key),
      record.fingerprint,
      record.result.json,
      record.sealed,
      record.result.createdResource,
      expiresAt,
    ]);
  }

  async purgeExpired(now: Date): Promise<number> {
    const { affected } = await this.host.execute(PURGE_EXPIRED, [now]);
    return affected;
  }
}

/** The key as stored without a pepper: its SHA-256 in hex (the migration computed the same for the keys before). */
export const keyHash = plainHash;
