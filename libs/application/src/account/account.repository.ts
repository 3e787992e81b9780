import { Account, ApiKey } from '@petstore/domain';

export abstract class AccountRepository {
  abstract findById(id: number): Promise<Account | null>;
  abstract save(account: Account): Promise<Account>;
}

export abstract class ApiKeyRepository {
  /** Keys not revoked whose prefix is `prefix`, each with its account. */
  abstract findActiveByPrefix(prefix: string): Promise<Array<{ key: ApiKey; account: Account }>>;
  abstract findForAccount(accountId: number, keyId: number): Promise<ApiKey | null>;
  abstract listForAccount(accountId: number): Promise<ApiKey[]>;
  /** Inserts or updates. Returns null when the hash is already stored (an existing key). */
  abstract save(key: ApiKey): Promise<ApiKey | null>;
  /** Records a use; cheap and rate-limited in the adapter (at most once a minute a key). */
  abstract touch(keyId: number, at: Date): Promise<void>;
}
