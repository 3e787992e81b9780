import { Injectable } from '@nestjs/common';
import { AccountRepository, ApiKeyRepository, Page, pageFromRows, PageRequest } from '@petstore/application';
import { Account, ApiKey, Role } from '@petstore/domain';
import { IsNull, MoreThan } from 'typeorm';
import { violated } from '../../database/driver-errors';
import { nextSequenceId } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';
import { AccountMapper, ApiKeyMapper } from './account.mapper';
import { AccountOrmEntity, ApiKeyOrmEntity } from './account.orm-entity';

@Injectable()
export class PgAccountRepository extends AccountRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async findById(id: number): Promise<Account | null> {
    const row = await this.host.manager.getRepository(AccountOrmEntity).findOneBy({ id });
    return row ? AccountMapper.toDomain(row) : null;
  }

  async lock(id: number): Promise<boolean> {
    const rows = await this.host.query(`SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, [id]);
    return rows.length > 0;
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host, 'accounts');
  }

  async add(account: Account): Promise<void> {
    await this.host.manager.getRepository(AccountOrmEntity).insert(AccountMapper.toPersistence(account));
  }
}

/** The unique constraint of `hash char(64) NOT NULL UNIQUE`, as PostgreSQL names it. */
const API_KEYS_HASH_UNIQUE = 'api_keys_hash_key';

/**
 * The statement findByHash runs, on every request whose key is not cached: fixed text (no query
 * building) through the unique index on hash, the row mapped straight to the domain objects. The
 * index test EXPLAINs exactly this text.
 */
export const FIND_API_KEY_BY_HASH_SQL = `SELECT k.id, k.account_id, k.prefix, k.hash, k.created_at, k.last_used_at,
       k.revoked_at, k.bootstrap, a.name AS account_name, a.role AS account_role, a.created_at AS account_created_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
 WHERE k.hash = $1`;

interface ApiKeyWithAccountRow {
  id: string;
  account_id: string;
  prefix: string;
  hash: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  bootstrap: boolean;
  account_name: string;
  account_role: Role;
  account_created_at: Date;
}

/** lastUsedAt is kept to the minute. */
const TOUCH_EVERY_MS = 60_000;

@Injectable()
export class PgApiKeyRepository extends ApiKeyRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(ApiKeyOrmEntity);
  }

  async findByHash(hash: string): Promise<{ key: ApiKey; account: Account } | null> {
    const [row] = await this.host.query<ApiKeyWithAccountRow>(FIND_API_KEY_BY_HASH_SQL, [hash]);
    if (!row) return null;
    const accountId = Number(row.account_id);
    return {
      key: ApiKey.restore({
        id: Number(row.id),
        accountId,
        prefix: row.prefix,
        hash: row.hash,
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
        revokedAt: row.revoked_at,
        bootstrap: row.bootstrap,
      }),
      account: Account.restore({
        id: accountId,
        name: row.account_name,
        role: row.account_role,
        createdAt: row.account_created_at,
      }),
    };
  }

  async findForAccount(accountId: number, keyId: number): Promise<ApiKey | null> {
    const row = await this.rows.findOneBy({ id: keyId, accountId });
    return row ? ApiKeyMapper.toDomain(row) : null;
  }

  async listForAccount(accountId: number, { limit, afterId }: PageRequest): Promise<Page<ApiKey>> {
    const rows = await this.rows.find({
      where: { accountId, revokedAt: IsNull(), ...(afterId ? { id: MoreThan(afterId) } : {}) },
      order: { id: 'ASC' },
      take: limit + 1,
    });
    return pageFromRows(rows.map(ApiKeyMapper.toDomain), limit, (k) => k.id);
  }

  countActiveForAccount(accountId: number): Promise<number> {
    return this.rows.countBy({ accountId, revokedAt: IsNull() });
  }

  async findBootstrapAccountId(): Promise<number | null> {
    const row = await this.rows.findOne({ where: { bootstrap: true }, order: { id: 'DESC' } });
    return row ? row.accountId : null;
  }

  async revokeBootstrapKeysExcept(keepHash: string, at: Date): Promise<string[]> {
    const rows = await this.host.query<{ hash: string }>(
      `UPDATE api_keys SET revoked_at = $2 WHERE bootstrap AND revoked_at IS NULL AND hash <> $1 RETURNING hash`,
      [keepHash, at],
    );
    return rows.map((row) => row.hash);
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host, 'api_keys');
  }

  async add(key: ApiKey): Promise<boolean> {
    try {
      await this.rows.insert(ApiKeyMapper.toPersistence(key));
      return true;
    } catch (error) {
      if (violated(error, 'unique', API_KEYS_HASH_UNIQUE)) return false;
      throw error;
    }
  }

  async save(key: ApiKey): Promise<void> {
    const { id, ...changes } = ApiKeyMapper.toPersistence(key);
    await this.rows.update({ id }, changes);
  }

  /** When this process last recorded each key's use: saves a write on most requests. */
  private readonly lastTouched = new Map<number, number>();

  async touch(keyId: number, at: Date): Promise<void> {
    const previous = this.lastTouched.get(keyId);
    if (previous !== undefined && at.getTime() - previous < TOUCH_EVERY_MS) return;
    if (this.lastTouched.size > 100_000) this.lastTouched.clear();
    this.lastTouched.set(keyId, at.getTime());
    await this.host.query(
      `UPDATE api_keys SET last_used_at = $2
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`,
      [keyId, at],
    );
  }
}
