import { InvalidValueError } from '../common/domain-error';
import { newId } from '../common/identity';
import { LIMITS } from '../common/limits';
import { displayName } from '../common/text';
import { InsufficientScopeError } from './account.errors';

/**
 * What a key may do. `read`: the safe methods only (GET, HEAD); `full`: everything its account may do
 * (so `full` includes `read`). An administrator's `read` key is an administrator for reading only.
 */
export const API_KEY_SCOPES = ['read', 'full'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/** Whether a key holding `held` may do what `needed` allows (`full` includes `read`). */
export function scopesGrant(held: readonly ApiKeyScope[], needed: ApiKeyScope): boolean {
  return held.includes('full') || held.includes(needed);
}

/** The key creating a new one: what it may pass on. */
export interface ApiKeyIssuer {
  scopes: readonly ApiKeyScope[];
  expiresAt: Date | null;
}

/** What a new key asks for; each may be left out (no name, `full`, no expiry, or its creator's). */
export interface ApiKeyRequest {
  name?: string | null;
  scopes?: readonly ApiKeyScope[];
  expiresAt?: Date | null;
}

export interface ApiKeyProps {
  id: number;
  accountId: number;
  /** The first characters of the key (`psk_` + 8), shown in listings to tell keys apart. */
  prefix: string;
  /** Hash of the whole key; the key itself is never stored. */
  hash: string;
  /** Its owner's label for it ("CI", "dashboard"); null if none was given (and for keys made before names). */
  name: string | null;
  /** Never empty, in the order of API_KEY_SCOPES, without repeats. */
  scopes: ApiKeyScope[];
  /** From this instant on the key is refused (`api_key_expired`); null: it does not expire. */
  expiresAt: Date | null;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** Issued at start-up for ADMIN_API_KEY; a different ADMIN_API_KEY revokes it. */
  bootstrap: boolean;
}

/**
 * A credential of an account. Only its hash is kept; a revoked key is refused at once, an expired one from its
 * `expiresAt` on. Its scopes bound what it may do, and what keys it may create: never more than it has itself.
 */
export class ApiKey {
  private constructor(private readonly props: ApiKeyProps) {}

  /** A new key, with the id `ApiKeyRepository.nextId()` gave. */
  static issue(input: {
    id: number;
    accountId: number;
    prefix: string;
    hash: string;
    now: Date;
    bootstrap?: boolean;
    request?: ApiKeyRequest;
    /**
     * The key creating this one; absent when the service issues it (sign-up, ADMIN_API_KEY). The new key has only
     * scopes it has, and does not outlive it: a key given away with an expiry cannot mint one without.
     */
    issuer?: ApiKeyIssuer;
  }): ApiKey {
    const { issuer } = input;
    const request = input.request ?? {};
    const scopes = ApiKey.checkScopes(request.scopes ?? ['full']);
    const missing = issuer && scopes.find((scope) => !scopesGrant(issuer.scopes, scope));
    if (missing) throw new InsufficientScopeError(missing);
    const expiresAt = request.expiresAt == null ? null : ApiKey.checkExpiry(request.expiresAt, input.now);
    if (issuer?.expiresAt && expiresAt && expiresAt.getTime() > issuer.expiresAt.getTime()) {
      throw new InvalidValueError(
        'expiresAt',
        `expiresAt must not be later than the expiry of the key creating it (${issuer.expiresAt.toISOString()}).`,
      );
    }
    return new ApiKey({
      id: newId(input.id),
      accountId: input.accountId,
      prefix: input.prefix,
      hash: input.hash,
      name:
        request.name == null ? null : displayName('name', request.name, LIMITS.apiKeyName.min, LIMITS.apiKeyName.max),
      scopes,
      expiresAt: expiresAt ?? issuer?.expiresAt ?? null,
      createdAt: input.now,
      lastUsedAt: null,
      revokedAt: null,
      bootstrap: input.bootstrap ?? false,
    });
  }

  static restore(props: ApiKeyProps): ApiKey {
    return new ApiKey({ ...props, scopes: [...props.scopes] });
  }

  get id(): number {
    return this.props.id;
  }
  get accountId(): number {
    return this.props.accountId;
  }
  get prefix(): string {
    return this.props.prefix;
  }
  get hash(): string {
    return this.props.hash;
  }
  get name(): string | null {
    return this.props.name;
  }
  get scopes(): readonly ApiKeyScope[] {
    return this.props.scopes;
  }
  get expiresAt(): Date | null {
    return this.props.expiresAt;
  }
  get createdAt(): Date {
    return this.props.createdAt;
  }
  get lastUsedAt(): Date | null {
    return this.props.lastUsedAt;
  }
  get isBootstrap(): boolean {
    return this.props.bootstrap;
  }
  get isRevoked(): boolean {
    return this.props.revokedAt !== null;
  }

  /** Refused from `expiresAt` on (the instant itself included). */
  isExpiredAt(now: Date): boolean {
    return this.props.expiresAt !== null && this.props.expiresAt.getTime() <= now.getTime();
  }

  grants(scope: ApiKeyScope): boolean {
    return scopesGrant(this.props.scopes, scope);
  }

  revoke(at: Date): void {
    if (this.props.revokedAt === null) this.props.revokedAt = at;
  }

  toSnapshot(): ApiKeyProps {
    return { ...this.props, scopes: [...this.props.scopes] };
  }

  private static checkScopes(scopes: readonly ApiKeyScope[]): ApiKeyScope[] {
    const unknown = scopes.find((scope) => !(API_KEY_SCOPES as readonly string[]).includes(scope));
    if (unknown !== undefined || scopes.length === 0) {
      throw new InvalidValueError('scopes', `scopes must name one or more of ${API_KEY_SCOPES.join(', ')}.`);
    }
    return API_KEY_SCOPES.filter((scope) => scopes.includes(scope));
  }

  private static checkExpiry(expiresAt: Date, now: Date): Date {
    const at = expiresAt.getTime();
    if (Number.isNaN(at) || at <= now.getTime()) {
      throw new InvalidValueError('expiresAt', 'expiresAt must be in the future.');
    }
    if (at - now.getTime() > LIMITS.apiKeyLifetimeMs.max) {
      throw new InvalidValueError(
        'expiresAt',
        `expiresAt must be at most ${LIMITS.apiKeyLifetimeMs.max / 86_400_000} days ahead.`,
      );
    }
    return new Date(at);
  }
}
