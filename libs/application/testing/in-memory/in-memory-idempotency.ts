import { createHash } from 'node:crypto';
import { IdempotencyOwner, IdempotencyRecord, IdempotencyStore } from '../../src/idempotency/idempotency.store';
import { ConstraintViolationError } from '../../src/ports';
import { InMemoryDatabase } from './in-memory-database';

/**
 * Idempotency keys in the fake's tables, so a record commits or rolls back with the command it belongs to. A key
 * is kept as its SHA-256, never as sent, as the PostgreSQL store keeps it. `tryLock` only checks that it runs in a
 * transaction: the fake's transactions run one at a time, so no other one can hold the key (what PostgreSQL's
 * advisory lock refuses, two requests at once, is tested on PostgreSQL).
 */
export class InMemoryIdempotencyStore extends IdempotencyStore {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async tryLock(): Promise<boolean> {
    this.db.assertInTransaction('IdempotencyStore.tryLock');
    return true;
  }

  async find(owner: IdempotencyOwner, key: string, now: Date): Promise<IdempotencyRecord | null> {
    const row = this.db.tables.idempotencyKeys.get(rowKey(owner, key));
    return row && row.expiresAt.getTime() > now.getTime() ? structuredClone(row.record) : null;
  }

  async save(owner: IdempotencyOwner, key: string, record: IdempotencyRecord, expiresAt: Date): Promise<void> {
    this.checkOwner(owner);
    const row = { owner, record: structuredClone(record), expiresAt: new Date(expiresAt.getTime()) };
    this.db.tables.idempotencyKeys.set(rowKey(owner, key), row);
  }

  async purgeExpired(now: Date): Promise<number> {
    const expired = [...this.db.tables.idempotencyKeys].filter(([, row]) => row.expiresAt.getTime() <= now.getTime());
    for (const [id] of expired) this.db.tables.idempotencyKeys.delete(id);
    return expired.length;
  }

  /** The owner's account must exist (the table's foreign key); null is the space of operations without one. */
  private checkOwner(owner: IdempotencyOwner): void {
    if (owner !== null && !this.db.tables.accounts.has(owner)) {
      throw new ConstraintViolationError('foreign_key', 'idempotency_keys_account_id_fkey', `No account ${owner}.`);
    }
  }
}

const rowKey = (owner: IdempotencyOwner, key: string) =>
  `${owner ?? 0}:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
