import { createHash } from 'node:crypto';
import { Account, ApiKey } from '@petstore/domain';
import { AccountRepository, ApiKeyRepository } from '../../src/account/account.repository';
import { KeyRevocations, RevocationSubscriber } from '../../src/account/key-revocations';
import { ApiKeySecrets, ConstraintViolationError, GeneratedApiKey } from '../../src/ports';
import { Page, PageRequest } from '../../src/common/page';
import { pageOf, primaryKeyTaken } from './in-memory-catalogue';
import { InMemoryDatabase } from './in-memory-database';

/** A key's use is recorded at most once a minute (as the TypeORM adapter does). */
const TOUCH_EVERY_MS = 60_000;

export class InMemoryAccountRepository extends AccountRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async findById(id: number): Promise<Account | null> {
    const row = this.db.tables.accounts.get(id);
    return row ? Account.restore(row) : null;
  }

  async lock(id: number): Promise<boolean> {
    return this.db.tables.accounts.has(id);
  }

  async nextId(): Promise<number> {
    return this.db.nextId('accounts');
  }

  async add(account: Account): Promise<void> {
    const row = account.toSnapshot();
    if (this.db.tables.accounts.has(row.id)) throw primaryKeyTaken('accounts', row.id);
    this.db.tables.accounts.set(row.id, row);
  }
}

/** API keys: the hash is unique (a second one is not stored: null), a key belongs to an existing account. */
export class InMemoryApiKeyRepository extends ApiKeyRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  private get rows() {
    return [...this.db.tables.apiKeys.values()];
  }

  async findByHash(hash: string): Promise<{ key: ApiKey; account: Account } | null> {
    const row = this.rows.find((key) => key.hash === hash);
    const account = row && this.db.tables.accounts.get(row.accountId);
    return row && account ? { key: ApiKey.restore(row), account: Account.restore(account) } : null;
  }

  async findForAccount(accountId: number, keyId: number): Promise<ApiKey | null> {
    const row = this.db.tables.apiKeys.get(keyId);
    return row && row.accountId === accountId ? ApiKey.restore(row) : null;
  }

  async listForAccount(accountId: number, page: PageRequest): Promise<Page<ApiKey>> {
    const active = this.rows.filter((key) => key.accountId === accountId && key.revokedAt === null);
    return pageOf(active.map(ApiKey.restore), (key) => key.id, page);
  }

  async countActiveForAccount(accountId: number, at: Date): Promise<number> {
    return this.rows.filter(
      (key) =>
        key.accountId === accountId &&
        key.revokedAt === null &&
        (key.expiresAt === null || key.expiresAt.getTime() > at.getTime()),
    ).length;
  }

  async findBootstrapAccountId(): Promise<number | null> {
    const newest = this.rows.filter((key) => key.bootstrap).sort((a, b) => b.id - a.id)[0];
    return newest ? newest.accountId : null;
  }

  async revokeBootstrapKeysExcept(keepHash: string, at: Date): Promise<string[]> {
    const revoked = this.rows.filter((key) => key.bootstrap && key.revokedAt === null && key.hash !== keepHash);
    for (const key of revoked) key.revokedAt = new Date(at.getTime());
    return revoked.map((key) => key.hash);
  }

  async nextId(): Promise<number> {
    return this.db.nextId('apiKeys');
  }

  async add(key: ApiKey): Promise<boolean> {
    const row = key.toSnapshot();
    if (this.db.tables.apiKeys.has(row.id)) throw primaryKeyTaken('api_keys', row.id);
    if (this.rows.some((other) => other.hash === row.hash)) return false;
    if (!this.db.tables.accounts.has(row.accountId)) {
      throw new ConstraintViolationError('foreign_key', 'api_keys_account_id_fkey', `No account ${row.accountId}.`);
    }
    this.db.tables.apiKeys.set(row.id, row);
    return true;
  }

  async save(key: ApiKey): Promise<void> {
    const row = key.toSnapshot();
    if (this.db.tables.apiKeys.has(row.id)) this.db.tables.apiKeys.set(row.id, row);
  }

  async touch(keyId: number, at: Date): Promise<void> {
    const row = this.db.tables.apiKeys.get(keyId);
    if (row && (row.lastUsedAt === null || row.lastUsedAt.getTime() < at.getTime() - TOUCH_EVERY_MS)) {
      row.lastUsedAt = new Date(at.getTime());
    }
  }
}

/**
 * Predictable secrets: `psk_test_<n>` keys, hashed with SHA-256 as the real ones are (so a stored
 * hash looks like one), without the randomness that would make tests unrepeatable.
 */
export class FakeApiKeySecrets extends ApiKeySecrets {
  private issued = 0;

  generate(): GeneratedApiKey {
    const key = `psk_test_${String(++this.issued).padStart(8, '0')}`;
    return { key, ...this.describe(key) };
  }

  describe(key: string): Omit<GeneratedApiKey, 'key'> {
    return { prefix: key.slice(0, 12), hash: createHash('sha256').update(key).digest('hex') };
  }
}

/**
 * The revocation signal as one instance sees it. An announcement is sent when its transaction
 * commits (never if it rolls back): `announced` lists those sent, for the other instances. It
 * does not come back to this instance's subscribers here (over PostgreSQL it does, but only
 * some time after the commit: the revoking use case may not rely on it). `deliver` is another
 * instance's announcement arriving; `disconnect`/`reconnect` take the signal down and back
 * (subscribers reset, as the PostgreSQL adapter does).
 */
export class InMemoryKeyRevocations extends KeyRevocations {
  private readonly subscribers: RevocationSubscriber[] = [];
  private connected = true;
  /** The announcements sent (committed), in order. */
  readonly announced: string[][] = [];

  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  get listening(): boolean {
    return this.connected;
  }

  async announce(hashes: readonly string[]): Promise<void> {
    this.db.afterCommit(() => this.announced.push([...hashes]));
  }

  subscribe(subscriber: RevocationSubscriber): void {
    this.subscribers.push(subscriber);
  }

  /** Another instance's announcement arriving here. */
  deliver(hashes: readonly string[]): void {
    if (this.connected) for (const subscriber of this.subscribers) subscriber.revoked(hashes);
  }

  disconnect(): void {
    this.connected = false;
    for (const subscriber of this.subscribers) subscriber.reset();
  }

  reconnect(): void {
    for (const subscriber of this.subscribers) subscriber.reset();
    this.connected = true;
  }
}
