import { Injectable } from '@nestjs/common';
import { ApiKeyRepository, Page, pageFromRows, PageRequest } from '@petstore/application';
import { Account, ApiKey, ApiKeyScope, Role } from '@petstore/domain';
import { violated } from '../../database/driver-errors';
import { listStatement } from '../../database/list-statement';
import { SequenceBlocks } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';

/** The unique constraint of `hash char(64) NOT NULL UNIQUE`, as PostgreSQL names it. */
const API_KEYS_HASH_UNIQUE = 'api_keys_hash_key';

/**
 * The statement findByHash runs, on every request whose key is not cached: fixed text (no query
 * building) through the unique index on hash, the row mapped straight to the domain objects. The
 * index test EXPLAINs exactly this text.
 */
export const FIND_API_KEY_BY_HASH_SQL = `SELECT k.id, k.account_id, k.prefix, k.hash, k.name, k.scopes, k.expires_at,
       k.created_at, k.last_used_at, k.revoked_at, k.bootstrap,
       a.name AS account_name, a.role AS account_role, a.created_at AS account_created_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
 WHERE k.hash = $1`;
const API_KEY_COLUMNS =
  'id, account_id, prefix, hash, name, scopes, expires_at, created_at, last_used_at, revoked_at, bootstrap';
const FIND_FOR_ACCOUNT = `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE id = $1 AND account_id = $2`;
/** An account's keys not revoked (listStatement): `$1` the account, after an id. */
const LIST_SELECT = `SELECT ${API_KEY_COLUMNS} FROM api_keys`;
const LIST_ACCOUNT = 'account_id = $1 AND revoked_at IS NULL';
const LIST_AFTER = (p: string) => `id > ${p}`;
const LIST_ORDER = (limit: string) => `ORDER BY id LIMIT ${limit}`;
const COUNT_ACTIVE_FOR_ACCOUNT = `SELECT count(*)::int AS n FROM api_keys
  WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`;
const FIND_BOOTSTRAP_ACCOUNT = `SELECT account_id FROM api_keys WHERE bootstrap ORDER BY id DESC LIMIT 1`;
const REVOKE_BOOTSTRAP_EXCEPT = `UPDATE api_keys SET revoked_at = $2
  WHERE bootstrap AND revoked_at IS NULL AND hash <> $1 RETURNING hash`;
/** `$1 … $11`: a key's values in the order of API_KEY_COLUMNS (keyValues). */
const INSERT = `INSERT INTO api_keys (${API_KEY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`;
const UPDATE = `UPDATE api_keys SET account_id = $2, prefix = $3, hash = $4, name = $5, scopes = $6, expires_at = $7,
  created_at = $8, last_used_at = $9, revoked_at = $10, bootstrap = $11 WHERE id = $1`;
/** At most one write a minute per key, whichever instance makes it. */
const TOUCH = `UPDATE api_keys SET last_used_at = $2
  WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`;

interface ApiKeyRow {
  id: string;
  account_id: string;
  prefix: string;
  hash: string;
  name: string | null;
  /** text[]: node-postgres reads it as an array of strings. */
  scopes: ApiKeyScope[];
  expires_at: Date | null;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
  bootstrap: boolean;
}

/** A key's values in the order of API_KEY_COLUMNS ($1 … $11 of the INSERT in add and the UPDATE in save). */
const keyValues = (key: ApiKey): unknown[] => {
  const k = key.toSnapshot();
  return [
    k.id,
    k.accountId,
    k.prefix,
    k.hash,
    k.name,
    k.scopes,
    k.expiresAt,
    k.createdAt,
    k.lastUsedAt,
    k.revokedAt,
    k.bootstrap,
  ];
};

const toApiKey = (row: ApiKeyRow) =>
  ApiKey.restore({
    id: Number(row.id),
    accountId: Number(row.account_id),
    prefix: row.prefix,
    hash: row.hash,
    name: row.name,
    scopes: row.scopes,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
    bootstrap: row.bootstrap,
  });

interface ApiKeyWithAccountRow extends ApiKeyRow {
  account_name: string;
  account_role: Role;
  account_created_at: Date;
}

/** lastUsedAt is kept to the minute. */
const TOUCH_EVERY_MS = 60_000;

@Injectable()
export class PgApiKeyRepository extends ApiKeyRepository {
  private readonly ids = new SequenceBlocks('api_keys');

  constructor(private readonly host: TransactionHost) {
    super();
  }

  async findByHash(hash: string): Promise<{ key: ApiKey; account: Account } | null> {
    const [row] = await this.host.query<ApiKeyWithAccountRow>(FIND_API_KEY_BY_HASH_SQL, [hash]);
    if (!row) return null;
    return {
      key: toApiKey(row),
      account: Account.restore({
        id: Number(row.account_id),
        name: row.account_name,
        role: row.account_role,
        createdAt: row.account_created_at,
      }),
    };
  }

  async findForAccount(accountId: number, keyId: number): Promise<ApiKey | null> {
    const [row] = await this.host.query<ApiKeyRow>(FIND_FOR_ACCOUNT, [keyId, accountId]);
    return row ? toApiKey(row) : null;
  }

  async listForAccount(accountId: number, { limit, afterId }: PageRequest): Promise<Page<ApiKey>> {
    const { text, params } = listStatement({
      select: LIST_SELECT,
      always: { sql: LIST_ACCOUNT, values: [accountId] },
      conditions: [[afterId, LIST_AFTER]],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<ApiKeyRow>(text, params);
    return pageFromRows(rows.map(toApiKey), limit, (k) => k.id);
  }

  async countActiveForAccount(accountId: number, at: Date): Promise<number> {
    const [row] = await this.host.query<{ n: number }>(COUNT_ACTIVE_FOR_ACCOUNT, [accountId, at]);
    return row.n;
  }

  async findBootstrapAccountId(): Promise<number | null> {
    const [row] = await this.host.query<{ account_id: string }>(FIND_BOOTSTRAP_ACCOUNT);
    return row ? Number(row.account_id) : null;
  }

  async revokeBootstrapKeysExcept(keepHash: string, at: Date): Promise<string[]> {
    const rows = await this.host.query<{ hash: string }>(REVOKE_BOOTSTRAP_EXCEPT, [keepHash, at]);
    return rows.map((row) => row.hash);
  }

  nextId(): Promise<number> {
    return this.ids.take(this.host);
  }

  async add(key: ApiKey): Promise<boolean> {
    try {
      await this.host.query(INSERT, keyValues(key));
      return true;
    } catch (error) {
      if (violated(error, 'unique', API_KEYS_HASH_UNIQUE)) return false;
      throw error;
    }
  }

  async save(key: ApiKey): Promise<void> {
    await this.host.query(UPDATE, keyValues(key));
  }

  /** When this process last recorded each key's use: saves a write on most requests. */
  private readonly lastTouched = new Map<number, number>();

  async touch(keyId: number, at: Date): Promise<void> {
    const previous = this.lastTouched.get(keyId);
    if (previous !== undefined && at.getTime() - previous < TOUCH_EVERY_MS) return;
    if (this.lastTouched.size > 100_000) this.lastTouched.clear();
    this.lastTouched.set(keyId, at.getTime());
    await this.host.query(TOUCH, [keyId, at]);
  }
}
