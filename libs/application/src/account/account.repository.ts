import { Account, ApiKey } from '@petstore/domain';
import { Page, PageRequest } from '../common/page';

export abstract class AccountRepository {
  abstract findById(id: number): Promise<Account | null>;
  /**
   * Locks the account's row until the transaction ends (`SELECT … FOR UPDATE`; inside `UnitOfWork.run`): what counts
   * against the account (its keys, the units of its open orders, its webhook endpoints) is then checked by one
   * command at a time. False if absent.
   */
  abstract lock(id: number): Promise<boolean>;
  /** A new account's id, taken from the table's sequence before the account is created (never reused). */
  abstract nextId(): Promise<number>;
  /** Stores a new account (an account does not change afterwards). */
  abstract add(account: Account): Promise<void>;
}

export abstract class ApiKeyRepository {
  /** The key with this hash (revoked or not) and its account: one unique-index lookup. */
  abstract findByHash(hash: string): Promise<{ key: ApiKey; account: Account } | null>;
  abstract findForAccount(accountId: number, keyId: number): Promise<ApiKey | null>;
  /** The account's keys that are not revoked (expired ones included, for their owner to see and revoke), by id. */
  abstract listForAccount(accountId: number, page: PageRequest): Promise<Page<ApiKey>>;
  /** The account's keys that count against its limit: neither revoked nor expired at `at`. */
  abstract countActiveForAccount(accountId: number, at: Date): Promise<number>;
  /** The account of the newest bootstrap key (revoked or not), if any. */
  abstract findBootstrapAccountId(): Promise<number | null>;
  /** Revokes every active bootstrap key whose hash is not `keepHash`; returns their hashes. */
  abstract revokeBootstrapKeysExcept(keepHash: string, at: Date): Promise<string[]>;
  /** A new key's id, taken from the table's sequence before the key is created (never reused). */
  abstract nextId(): Promise<number>;
  /** Stores a new key. False, and nothing stored, when the hash is already stored (an existing key). */
  abstract add(key: ApiKey): Promise<boolean>;
  /** Writes a stored key's changes (its revocation). */
  abstract save(key: ApiKey): Promise<void>;
  /** Records a use; cheap and rate-limited in the adapter (at most once a minute a key). */
  abstract touch(keyId: number, at: Date): Promise<void>;
}
