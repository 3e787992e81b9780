import { Injectable } from '@nestjs/common';
import { AccountRepository, ApiKeyRepository } from '@petstore/application';
import { Account, ApiKey } from '@petstore/domain';
import { IsNull } from 'typeorm';
import { violated } from '../../database/driver-errors';
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

  async save(account: Account): Promise<Account> {
    const row = await this.host.manager.getRepository(AccountOrmEntity).save(AccountMapper.toPersistence(account));
    return AccountMapper.toDomain(row);
  }
}

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

  async findActiveByPrefix(prefix: string): Promise<Array<{ key: ApiKey; account: Account }>> {
    const rows = await this.rows.find({
      where: { prefix, revokedAt: IsNull() },
      relations: { account: true },
    });
    return rows.map((row) => ({ key: ApiKeyMapper.toDomain(row), account: AccountMapper.toDomain(row.account!) }));
  }

  async findForAccount(accountId: number, keyId: number): Promise<ApiKey | null> {
    const row = await this.rows.findOneBy({ id: keyId, accountId });
    return row ? ApiKeyMapper.toDomain(row) : null;
  }

  async listForAccount(accountId: number): Promise<ApiKey[]> {
    const rows = await this.rows.find({ where: { accountId, revokedAt: IsNull() }, order: { id: 'ASC' } });
    return rows.map(ApiKeyMapper.toDomain);
  }

  async save(key: ApiKey): Promise<ApiKey | null> {
    try {
      return ApiKeyMapper.toDomain(await this.rows.save(ApiKeyMapper.toPersistence(key)));
    } catch (error) {
      if (violated(error, 'unique')) return null;
      throw error;
    }
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
