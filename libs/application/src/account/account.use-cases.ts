import { Injectable } from '@nestjs/common';
import {
  Account,
  ApiKey,
  ApiKeyNotFoundError,
  ApiKeyIssuer,
  ApiKeyRequest,
  TooManyApiKeysError,
  LIMITS,
} from '@petstore/domain';
import { ApiKeySecrets, Clock, UnitOfWork } from '../ports';
import { Page, PageRequest } from '../common/page';
import { AccountRepository, ApiKeyRepository } from './account.repository';
import { KeyRevocations } from './key-revocations';
import { VerifiedKey, VerifiedKeyCache } from './verified-key-cache';

export interface IssuedApiKey {
  apiKey: ApiKey;
  /** The secret: returned once, never stored. */
  secret: string;
}

@Injectable()
export class IssueApiKey {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: AccountRepository,
    private readonly keys: ApiKeyRepository,
    private readonly secrets: ApiKeySecrets,
    private readonly clock: Clock,
  ) {}

  /**
   * At most LIMITS.activeApiKeys.max active keys an account: the account's row is locked while the
   * keys are counted and the new one stored, so concurrent requests cannot all pass the count (an expired key
   * does not count). `request` names the key, and bounds it (scopes, expiry); `issuer`, the key asking, when a key
   * asks: the new key has only scopes that one has, and expires no later than it does.
   */
  execute(accountId: number, request: ApiKeyRequest = {}, issuer?: ApiKeyIssuer): Promise<IssuedApiKey> {
    return this.uow.run(async () => {
      if (!(await this.accounts.lock(accountId))) throw new Error(`Account ${accountId} vanished while issuing a key.`);
      const now = this.clock.now();
      if ((await this.keys.countActiveForAccount(accountId, now)) >= LIMITS.activeApiKeys.max) {
        throw new TooManyApiKeysError(LIMITS.activeApiKeys.max);
      }
      const generated = this.secrets.generate();
      const { prefix, hash } = generated;
      const id = await this.keys.nextId();
      const apiKey = ApiKey.issue({ id, accountId, prefix, hash, now, request, issuer });
      // 256 random bits colliding with a stored hash does not happen; refuse loudly if it ever does.
      if (!(await this.keys.add(apiKey))) throw new Error('Generated API key collided with an existing one.');
      return { apiKey, secret: generated.key };
    });
  }
}

@Injectable()
export class SignUp {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: AccountRepository,
    private readonly issueKey: IssueApiKey,
    private readonly clock: Clock,
  ) {}

  execute(name: string): Promise<{ account: Account } & IssuedApiKey> {
    return this.uow.run(async () => {
      const account = Account.signUp({ id: await this.accounts.nextId(), name, now: this.clock.now() });
      await this.accounts.add(account);
      return { account, ...(await this.issueKey.execute(account.id)) };
    });
  }
}

@Injectable()
export class ManageApiKeys {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: ApiKeyRepository,
    private readonly clock: Clock,
    private readonly revocations: KeyRevocations,
    private readonly verifiedKeys: VerifiedKeyCache,
  ) {}

  list(accountId: number, page: PageRequest): Promise<Page<ApiKey>> {
    return this.keys.listForAccount(accountId, page);
  }

  /**
   * Refused from the next request on, on every instance: this one forgets the key once the
   * revocation is committed, the others when the announcement (sent at commit) reaches them.
   */
  async revoke(accountId: number, keyId: number): Promise<void> {
    const hash = await this.uow.run(async () => {
      const key = await this.keys.findForAccount(accountId, keyId);
      if (!key || key.isRevoked) throw new ApiKeyNotFoundError(keyId);
      key.revoke(this.clock.now());
      await this.keys.save(key);
      await this.revocations.announce([key.hash]);
      return key.hash;
    });
    this.verifiedKeys.revoked([hash]);
  }
}

@Injectable()
export class Authenticate {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly secrets: ApiKeySecrets,
    private readonly clock: Clock,
    private readonly verifiedKeys: VerifiedKeyCache,
  ) {}

  /**
   * The presented key, found valid (its account, scopes and expiry); `'expired'` for a key past its
   * `expiresAt` (the caller says so: the client must get a new key); null for an unknown or revoked one. The key is
   * found by its SHA-256, in the cache of recently verified keys or else through a unique index,
   * so the cost does not grow with the number of keys. Timing reveals at most how the presented
   * key's hash sorts against stored ones (or whether it is cached), which tells nothing usable
   * about a key of 256 random bits (finding one would need a SHA-256 preimage).
   */
  async execute(presented: string): Promise<VerifiedKey | 'expired' | null> {
    const { hash } = this.secrets.describe(presented);
    // The cache compares a cached key's expiresAt with the Clock on every hit: an expired key falls through.
    const cached = this.verifiedKeys.get(hash);
    if (cached) {
      await this.keys.touch(cached.keyId, this.clock.now());
      return cached;
    }
    const ticket = this.verifiedKeys.ticket();
    const found = await this.keys.findByHash(hash);
    if (!found || found.key.isRevoked) return null;
    const now = this.clock.now();
    if (found.key.isExpiredAt(now)) return 'expired';
    const { key, account } = found;
    const verified: VerifiedKey = { account, keyId: key.id, scopes: key.scopes, expiresAt: key.expiresAt };
    this.verifiedKeys.remember(hash, verified, ticket);
    await this.keys.touch(key.id, now);
    return verified;
  }
}

export type BootstrapOutcome = 'created' | 'existing' | 'revoked';

/**
 * Makes sure an administrator holds `key` (ADMIN_API_KEY), and that no earlier ADMIN_API_KEY
 * still works. Idempotent across restarts and safe when several instances start at once: the
 * key's hash is unique, so a second insert is refused and its transaction rolls back. A new key
 * goes to the administrator that held the previous one. A key that was revoked (by an earlier
 * rotation, or through the API) stays revoked, and the others stay valid: the caller warns.
 *
 * `{ bootstrap: false }` (the seed's key, `npm run seed`): a new administrator holds the key, an ordinary key that
 * no ADMIN_API_KEY revokes, and it revokes none: the seed's key and ADMIN_API_KEY coexist, whichever came first.
 */
@Injectable()
export class EnsureAdministrator {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: AccountRepository,
    private readonly keys: ApiKeyRepository,
    private readonly secrets: ApiKeySecrets,
    private readonly clock: Clock,
    private readonly revocations: KeyRevocations,
    private readonly verifiedKeys: VerifiedKeyCache,
  ) {}

  /** `onRevoked`: told, once committed, how many earlier ADMIN_API_KEYs this revoked (for the start-up log). */
  async execute(
    key: string,
    { bootstrap = true, onRevoked }: { bootstrap?: boolean; onRevoked?: (count: number) => void } = {},
  ): Promise<BootstrapOutcome> {
    const { prefix, hash } = this.secrets.describe(key);
    let revoked: string[] = [];
    return this.uow
      .run(async (): Promise<BootstrapOutcome> => {
        const now = this.clock.now();
        const found = await this.keys.findByHash(hash);
        // Going back to a revoked key must not lock the administrator out: the newer key keeps working.
        if (found?.key.isRevoked) return 'revoked';
        if (bootstrap) revoked = await this.keys.revokeBootstrapKeysExcept(hash, now);
        // Running instances still holding a previous ADMIN_API_KEY in their caches drop it at commit.
        if (revoked.length) await this.revocations.announce(revoked);
        if (found) return 'existing';
        const accountId =
          (bootstrap ? await this.keys.findBootstrapAccountId() : null) ?? (await this.addAdministrator(now));
        const apiKey = ApiKey.issue({ id: await this.keys.nextId(), accountId, prefix, hash, now, bootstrap });
        if (!(await this.keys.add(apiKey))) throw new AdministratorKeyConflict();
        return 'created';
      })
      .then((outcome) => {
        if (revoked.length) onRevoked?.(revoked.length);
        return outcome;
      })
      .catch((error: unknown) => {
        if (error instanceof AdministratorKeyConflict) return 'existing' as const;
        throw error;
      })
      .finally(() => {
        // Rolled back, nothing was revoked; forgetting the keys anyway costs only a database lookup.
        if (revoked.length) this.verifiedKeys.revoked(revoked);
      });
  }

  private async addAdministrator(now: Date): Promise<number> {
    const account = Account.administrator({ id: await this.accounts.nextId(), name: 'Administrator', now });
    await this.accounts.add(account);
    return account.id;
  }
}

/** The key was stored by a concurrent start-up; rolling back our account keeps things clean. */
class AdministratorKeyConflict extends Error {}
