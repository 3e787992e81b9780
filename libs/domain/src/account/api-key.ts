import { newId } from '../common/identity';

export interface ApiKeyProps {
  id: number;
  accountId: number;
  /** The first characters of the key (`psk_` + 8), shown in listings to tell keys apart. */
  prefix: string;
  /** Hash of the whole key; the key itself is never stored. */
  hash: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** Issued at start-up for ADMIN_API_KEY; a different ADMIN_API_KEY revokes it. */
  bootstrap: boolean;
}

/** A credential of an account. Only its hash is kept; a revoked key is refused at once. */
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
  }): ApiKey {
    return new ApiKey({
      id: newId(input.id),
      accountId: input.accountId,
      prefix: input.prefix,
      hash: input.hash,
      createdAt: input.now,
      lastUsedAt: null,
      revokedAt: null,
      bootstrap: input.bootstrap ?? false,
    });
  }

  static restore(props: ApiKeyProps): ApiKey {
    return new ApiKey({ ...props });
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

  revoke(at: Date): void {
    if (this.props.revokedAt === null) this.props.revokedAt = at;
  }

  toSnapshot(): ApiKeyProps {
    return { ...this.props };
  }
}
