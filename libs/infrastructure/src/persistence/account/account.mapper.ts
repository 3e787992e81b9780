import { Account, ApiKey } from '@petstore/domain';
import { AccountOrmEntity, ApiKeyOrmEntity } from './account.orm-entity';

export const AccountMapper = {
  toDomain(row: AccountOrmEntity): Account {
    return Account.restore({ id: row.id, name: row.name, role: row.role, createdAt: row.createdAt });
  },
  toPersistence(account: Account): AccountOrmEntity {
    const row = new AccountOrmEntity();
    const s = account.toSnapshot();
    row.id = s.id;
    row.name = s.name;
    row.role = s.role;
    row.createdAt = s.createdAt;
    return row;
  },
};

export const ApiKeyMapper = {
  toDomain(row: ApiKeyOrmEntity): ApiKey {
    return ApiKey.restore({
      id: row.id,
      accountId: row.accountId,
      prefix: row.prefix,
      hash: row.hash,
      createdAt: row.createdAt,
      lastUsedAt: row.lastUsedAt,
      revokedAt: row.revokedAt,
      bootstrap: row.bootstrap,
    });
  },
  toPersistence(key: ApiKey): ApiKeyOrmEntity {
    const row = new ApiKeyOrmEntity();
    const s = key.toSnapshot();
    row.id = s.id;
    row.accountId = s.accountId;
    row.prefix = s.prefix;
    row.hash = s.hash;
    row.createdAt = s.createdAt;
    row.lastUsedAt = s.lastUsedAt;
    row.revokedAt = s.revokedAt;
    row.bootstrap = s.bootstrap;
    return row;
  },
};
