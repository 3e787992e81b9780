import { Injectable } from '@nestjs/common';
import { Page, PageRequest, pageFromRows, WebhookEndpointRepository, WebhookSubscriber } from '@petstore/application';
import { isCatalogueEvent, WebhookEndpoint, WebhookEventType } from '@petstore/domain';
import { listStatement } from '../../database/list-statement';
import { SequenceBlocks } from '../../database/next-id';
import { TransactionHost } from '../../database/transaction-host';

/*
 * Fixed SQL run straight on pg by the transaction host: rows map straight to the aggregate (WebhookEndpoint.restore).
 * Several statements (guarded updates, arrays) are plain SQL anyway. The table is the one its migrations create.
 */
const COLUMNS = `id, owner_id, url, events, secret, created_at, disabled_at, previous_secret,
  previous_secret_expires_at`;
/** The same columns of `webhook_endpoints e`, with whether its owner is an administrator (`accounts a`). */
const WITH_OWNER = `e.id, e.owner_id, e.url, e.events, e.secret, e.created_at, e.disabled_at, e.previous_secret,
  e.previous_secret_expires_at, a.role = 'admin' AS owner_is_admin`;
const COUNT_BY_OWNER = `SELECT count(*)::int AS n FROM webhook_endpoints WHERE owner_id = $1`;
const INSERT = `INSERT INTO webhook_endpoints (id, owner_id, url, events, secret, created_at)
  VALUES ($1, $2, $3, $4, $5, $6)`;
const FIND_BY_ID = `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1`;
const LOCK_BY_ID = `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1 FOR UPDATE`;
const LOCK_WITH_OWNER = `SELECT ${WITH_OWNER}
  FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
  WHERE e.id = $1 FOR UPDATE OF e`;
/** `$8` true ends the failing streak. */
const UPDATE = `UPDATE webhook_endpoints
  SET url = $2, events = $3, secret = $4, previous_secret = $5, previous_secret_expires_at = $6,
      disabled_at = $7, failing_since = CASE WHEN $8 THEN NULL ELSE failing_since END
  WHERE id = $1`;
/** An owner's endpoints (listStatement): `$1` the owner, after an id. */
const LIST_SELECT = `SELECT ${COLUMNS} FROM webhook_endpoints`;
const LIST_OWNER = 'owner_id = $1';
const LIST_AFTER = (p: string) => `id > ${p}`;
const LIST_ORDER = (limit: string) => `ORDER BY id LIMIT ${limit}`;
const DELETE = `DELETE FROM webhook_endpoints WHERE id = $1`;
/**
 * The candidates: enabled, subscribed to `$1`, owned by the subject's owner `$2` or an administrator, or by anyone
 * when `$3` (a catalogue event, which every account may receive).
 */
const FIND_SUBSCRIBERS = `SELECT ${WITH_OWNER}
  FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
  WHERE $1 = ANY (e.events) AND e.disabled_at IS NULL AND ($3::boolean OR e.owner_id = $2 OR a.role = 'admin')
  ORDER BY e.id`;
const HAS_SUBSCRIBERS = `SELECT EXISTS (
  SELECT 1 FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
  WHERE $1 = ANY (e.events) AND e.disabled_at IS NULL AND ($3::boolean OR e.owner_id = $2 OR a.role = 'admin'))
  AS found`;
const RECORD_DELIVERED = `UPDATE webhook_endpoints SET failing_since = NULL
  WHERE id = $1 AND failing_since IS NOT NULL`;
const RECORD_FAILED = `UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1 AND failing_since IS NULL`;
const DISABLE_FAILING_SINCE = `UPDATE webhook_endpoints SET disabled_at = $2
  WHERE disabled_at IS NULL AND failing_since <= $1`;

/** A row of `webhook_endpoints` as pg returns it (bigint as text, timestamptz as a Date). */
interface EndpointRow {
  id: string;
  owner_id: string;
  url: string;
  events: string[];
  secret: string;
  created_at: Date;
  disabled_at: Date | null;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
}

/** A row with its owner's role (LOCK_WITH_OWNER, FIND_SUBSCRIBERS). */
interface EndpointWithOwnerRow extends EndpointRow {
  owner_is_admin: boolean;
}

const toEndpoint = (row: EndpointRow): WebhookEndpoint =>
  WebhookEndpoint.restore({
    id: Number(row.id),
    ownerId: Number(row.owner_id),
    url: row.url,
    events: row.events as WebhookEventType[],
    secret: row.secret,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    previousSecret: row.previous_secret,
    previousSecretExpiresAt: row.previous_secret_expires_at,
  });

const toSubscriber = (row: EndpointWithOwnerRow): WebhookSubscriber => ({
  endpoint: toEndpoint(row),
  ownerIsAdmin: row.owner_is_admin === true,
});

@Injectable()
export class PgWebhookEndpointRepository extends WebhookEndpointRepository {
  private readonly ids = new SequenceBlocks('webhook_endpoints');

  constructor(private readonly host: TransactionHost) {
    super();
  }

  async countByOwner(ownerId: number): Promise<number> {
    const [row] = await this.host.query<{ n: number }>(COUNT_BY_OWNER, [ownerId]);
    return row.n;
  }

  nextId(): Promise<number> {
    return this.ids.take(this.host);
  }

  async add(endpoint: WebhookEndpoint): Promise<void> {
    const e = endpoint.toSnapshot();
    await this.host.query<unknown>(INSERT, [e.id, e.ownerId, e.url, e.events, e.secret, e.createdAt]);
  }

  async findById(id: number): Promise<WebhookEndpoint | null> {
    const [row] = await this.host.query<EndpointRow>(FIND_BY_ID, [id]);
    return row ? toEndpoint(row) : null;
  }

  async lockById(id: number): Promise<WebhookEndpoint | null> {
    this.host.requireTransaction('lockById');
    const [row] = await this.host.query<EndpointRow>(LOCK_BY_ID, [id]);
    return row ? toEndpoint(row) : null;
  }

  async lockWithOwner(id: number): Promise<WebhookSubscriber | null> {
    this.host.requireTransaction('lockWithOwner');
    const [row] = await this.host.query<EndpointWithOwnerRow>(LOCK_WITH_OWNER, [id]);
    return row ? toSubscriber(row) : null;
  }

  async update(endpoint: WebhookEndpoint, { resetHealth }: { resetHealth: boolean }): Promise<void> {
    const e = endpoint.toSnapshot();
    await this.host.query<unknown>(UPDATE, [
      e.id,
      e.url,
      e.events,
      e.secret,
      e.previousSecret,
      e.previousSecretExpiresAt,
      e.disabledAt,
      resetHealth,
    ]);
  }

  async listByOwner(ownerId: number, { limit, afterId }: PageRequest): Promise<Page<WebhookEndpoint>> {
    const { text, params } = listStatement({
      select: LIST_SELECT,
      always: { sql: LIST_OWNER, values: [ownerId] },
      conditions: [[afterId, LIST_AFTER]],
      order: LIST_ORDER,
      limit: limit + 1,
    });
    const rows = await this.host.query<EndpointRow>(text, params);
    return pageFromRows(rows.map(toEndpoint), limit, (endpoint) => endpoint.id);
  }

  async delete(id: number): Promise<void> {
    await this.host.query<unknown>(DELETE, [id]);
  }

  async findSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<WebhookSubscriber[]> {
    const rows = await this.host.query<EndpointWithOwnerRow>(FIND_SUBSCRIBERS, [
      type,
      subjectOwnerId,
      isCatalogueEvent(type),
    ]);
    return rows.map(toSubscriber);
  }

  async hasSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<boolean> {
    const [row] = await this.host.query<{ found: boolean }>(HAS_SUBSCRIBERS, [
      type,
      subjectOwnerId,
      isCatalogueEvent(type),
    ]);
    return row.found;
  }

  async recordHealth(endpointId: number, delivered: boolean, at: Date): Promise<void> {
    if (delivered) await this.host.query<unknown>(RECORD_DELIVERED, [endpointId]);
    else await this.host.query<unknown>(RECORD_FAILED, [endpointId, at]);
  }

  async disableFailingSince(since: Date, now: Date): Promise<number> {
    const { affected: count } = await this.host.execute(DISABLE_FAILING_SINCE, [since, now]);
    return count;
  }
}
