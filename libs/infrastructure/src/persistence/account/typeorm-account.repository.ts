import { Injectable } from '@nestjs/common';
import { AccountRepository, ApiKeyRepository, Page, pageFromRows, PageRequest } from '@petstore/application';
import { Account, ApiKey } from '@petstore/domain';
import { IsNull, MoreThan, SelectQueryBuilder } from 'typeorm';
import { violated } from '../../database/driver-errors';
import { nextSequenceId } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';
import { AccountMapper, ApiKeyMapper } from './account.mapper';
import { AccountOrmEntity, ApiKeyOrmEntity } from './account.orm-entity';

@Injectable()
export class TypeOrmAccountRepository extends AccountRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  async findById(id: number): Promise<Account | null> {
    const row = await this.host.manager.getRepository(AccountOrmEntity).findOneBy({ id });
    return row ? AccountMapper.toDomain(row) : null;
  }

  async lock(id: number): Promise<boolean> {
    const rows: unknown[] = await this.host.manager.query(`SELECT id FROM accounts WHERE id = $1 FOR UPDATE`, [id]);
    return rows.length > 0;
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host.manager, 'accounts');
  }

  async add(account: Account): Promise<void> {
    await this.host.manager.getRepository(AccountOrmEntity).insert(AccountMapper.toPersistence(account));
  }
}

/** The unique constraint of `hash char(64) NOT NULL UNIQUE`, as PostgreSQL names it. */
const API_KEYS_HASH_UNIQUE = 'api_keys_hash_key';

/** lastUsedAt is kept to the minute. */
const TOUCH_EVERY_MS = 60_000;

@Injectable()
export class TypeOrmApiKeyRepository extends ApiKeyRepository {
  constructor(private readonly host: TransactionHost) {
    super();
  }

  private get rows() {
    return this.host.manager.getRepository(ApiKeyOrmEntity);
  }

  /** The query findByHash runs (the index test EXPLAINs exactly this). */
  byHashQuery(hash: string): SelectQueryBuilder<ApiKeyOrmEntity> {
    return this.rows
      .createQueryBuilder('key')
      .innerJoinAndSelect('key.account', 'account')
      .where('key.hash = :hash', { hash });
  }

  async findByHash(hash: string): Promise<{ key: ApiKey; account: Account } | null> {
    const row = await this.byHashQuery(hash).getOne();
    return row ? { key: ApiKeyMapper.toDomain(row), account: AccountMapper.toDomain(row.account!) } : null;
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

  async revokeBootstrapKeysExcept(keepHash: string, at: Date): Promise<number> {
    const result = await this.rows
      .createQueryBuilder()
      .update()
      .set({ revokedAt: at })
      .where('bootstrap AND revoked_at IS NULL AND hash <> :keepHash', { keepHash })
      .execute();
    return result.affected ?? 0;
  }

  nextId(): Promise<number> {
    return nextSequenceId(this.host.manager, 'api_keys');
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
    await this.host.manager.query(
      `UPDATE api_keys SET last_used_at = $2
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`,
      [keyId, at],
    );
  }
}
