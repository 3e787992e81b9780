import { Injectable } from '@nestjs/common';
import { Account, ApiKey, ApiKeyNotFoundError } from '@petstore/domain';
import { ApiKeySecrets, Clock, UnitOfWork } from '../ports';
import { AccountRepository, ApiKeyRepository } from './account.repository';

export interface IssuedApiKey {
  apiKey: ApiKey;
  /** The secret: returned once, never stored. */
  secret: string;
}

@Injectable()
export class IssueApiKey {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly secrets: ApiKeySecrets,
    private readonly clock: Clock,
  ) {}

  async execute(accountId: number): Promise<IssuedApiKey> {
    const generated = this.secrets.generate();
    const saved = await this.keys.save(
      ApiKey.issue({ accountId, prefix: generated.prefix, hash: generated.hash, now: this.clock.now() }),
    );
    // 256 random bits colliding with a stored hash does not happen; refuse loudly if it ever does.
    if (!saved) throw new Error('Generated API key collided with an existing one.');
    return { apiKey: saved, secret: generated.key };
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
      const account = await this.accounts.save(Account.signUp(name, this.clock.now()));
      return { account, ...(await this.issueKey.execute(account.id)) };
    });
  }
}

@Injectable()
export class ManageApiKeys {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly clock: Clock,
  ) {}

  list(accountId: number): Promise<ApiKey[]> {
    return this.keys.listForAccount(accountId);
  }

  async revoke(accountId: number, keyId: number): Promise<void> {
    const key = await this.keys.findForAccount(accountId, keyId);
    if (!key || key.isRevoked) throw new ApiKeyNotFoundError(keyId);
    key.revoke(this.clock.now());
    await this.keys.save(key);
  }
}

@Injectable()
export class Authenticate {
  constructor(
    private readonly keys: ApiKeyRepository,
    private readonly secrets: ApiKeySecrets,
    private readonly clock: Clock,
  ) {}

  /** The account a presented key belongs to, or null for an unknown or revoked key. */
  async execute(presented: string): Promise<Account | null> {
    const { prefix } = this.secrets.describe(presented);
    const candidates = await this.keys.findActiveByPrefix(prefix);
    // Compare every candidate in constant time; do not stop at the first match.
    let found: { key: ApiKey; account: Account } | null = null;
    for (const candidate of candidates) {
      if (this.secrets.matches(presented, candidate.key.hash)) found = candidate;
    }
    if (!found) return null;
    await this.keys.touch(found.key.id, this.clock.now());
    return found.account;
  }
}

/**
 * Makes sure an administrator holds `key` (ADMIN_API_KEY). Idempotent across
 * restarts and safe when several instances start at once: the key's hash is unique,
 * so a second insert is refused and its transaction (with its account) rolls back.
 */
@Injectable()
export class EnsureAdministrator {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: AccountRepository,
    private readonly keys: ApiKeyRepository,
    private readonly secrets: ApiKeySecrets,
    private readonly clock: Clock,
  ) {}

  async execute(key: string): Promise<'created' | 'existing'> {
    const { prefix, hash } = this.secrets.describe(key);
    const existing = await this.keys.findActiveByPrefix(prefix);
    if (existing.some((c) => this.secrets.matches(key, c.key.hash) && c.account.isAdmin)) return 'existing';
    return this.uow.run(async () => {
      const now = this.clock.now();
      const admin = await this.accounts.save(Account.administrator('Administrator', now));
      const saved = await this.keys.save(ApiKey.issue({ accountId: admin.id, prefix, hash, now }));
      if (!saved) throw new AdministratorKeyConflict();
      return 'created' as const;
    }).catch((error: unknown) => {
      if (error instanceof AdministratorKeyConflict) return 'existing' as const;
      throw error;
    });
  }
}

/** The key was stored by a concurrent start-up; rolling back our account keeps things clean. */
class AdministratorKeyConflict extends Error {}
