import { isCatalogueEvent, WebhookEndpoint, WebhookEventType, WebhookUrlRefusedError } from '@petstore/domain';
import { Page, PageRequest, pageFromRows } from '../../src/common/page';
import { Clock, ConstraintViolationError } from '../../src/ports';
import { EndpointChangeSubscriber, WebhookEndpointChanges } from '../../src/webhook/subscriber-cache';
import {
  RecoveredDeliveries,
  recoveryBatch,
  RecoveryRequest,
  WebhookAttemptOutcome,
  WebhookAttemptTarget,
  WebhookDelivery,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookEndpointRepository,
  WebhookFanOutQueue,
  WebhookOutboundBudget,
  WebhookOutboundSettings,
  WebhookQueueStats,
  WebhookRequest,
  WebhookResponse,
  WebhookSecrets,
  WebhookSender,
  WebhookSubscriber,
  WebhookUrlPolicy,
} from '../../src/webhook/webhook.ports';
import { InMemoryDatabase, WebhookEndpointRow } from './in-memory-database';
import { positionOf } from './in-memory-events';

const toEndpoint = ({ failingSince: _failingSince, ...props }: WebhookEndpointRow) => WebhookEndpoint.restore(props);

/**
 * Webhook endpoints as PostgreSQL keeps them (`webhook_endpoints`): ids from a sequence, the owner an account
 * (foreign key; deleting an endpoint deletes its deliveries and its pings, as the cascades do), a failing streak
 * per endpoint.
 */
export class InMemoryWebhookEndpointRepository extends WebhookEndpointRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  private get rows(): WebhookEndpointRow[] {
    return [...this.db.tables.webhookEndpoints.values()].sort((a, b) => a.id - b.id);
  }

  async countByOwner(ownerId: number): Promise<number> {
    return this.rows.filter((row) => row.ownerId === ownerId).length;
  }

  async nextId(): Promise<number> {
    return this.db.nextId('webhookEndpoints');
  }

  async add(endpoint: WebhookEndpoint): Promise<void> {
    const props = endpoint.toSnapshot();
    if (this.db.tables.webhookEndpoints.has(props.id)) {
      throw new ConstraintViolationError('unique', 'webhook_endpoints_pkey', `duplicate key: endpoint ${props.id}.`);
    }
    if (!this.db.tables.accounts.has(props.ownerId)) {
      throw new ConstraintViolationError(
        'foreign_key',
        'webhook_endpoints_owner_id_fkey',
        `No account ${props.ownerId}.`,
      );
    }
    this.db.tables.webhookEndpoints.set(props.id, { ...props, failingSince: null });
  }

  async findById(id: number): Promise<WebhookEndpoint | null> {
    const row = this.db.tables.webhookEndpoints.get(id);
    return row ? toEndpoint(row) : null;
  }

  async lockById(id: number): Promise<WebhookEndpoint | null> {
    this.db.assertInTransaction('lockById');
    return this.findById(id);
  }

  async lockWithOwner(id: number): Promise<WebhookSubscriber | null> {
    this.db.assertInTransaction('lockWithOwner');
    const row = this.db.tables.webhookEndpoints.get(id);
    return row ? { endpoint: toEndpoint(row), ownerIsAdmin: this.isAdmin(row.ownerId) } : null;
  }

  async update(endpoint: WebhookEndpoint, { resetHealth }: { resetHealth: boolean }): Promise<void> {
    const row = this.db.tables.webhookEndpoints.get(endpoint.id);
    if (!row) return;
    const { id: _id, ownerId: _ownerId, createdAt: _createdAt, ...changes } = endpoint.toSnapshot();
    Object.assign(row, changes);
    if (resetHealth) row.failingSince = null;
  }

  async listByOwner(ownerId: number, { limit, afterId }: PageRequest): Promise<Page<WebhookEndpoint>> {
    const rows = this.rows.filter((row) => row.ownerId === ownerId && row.id > (afterId ?? 0)).slice(0, limit + 1);
    return pageFromRows(rows.map(toEndpoint), limit, (endpoint) => endpoint.id);
  }

  async delete(id: number): Promise<void> {
    const { webhookEndpoints, webhookEvents, webhookDeliveries } = this.db.tables;
    webhookEndpoints.delete(id);
    for (const [key, event] of webhookEvents) if (event.endpointId === id) webhookEvents.delete(key);
    for (const [key, delivery] of webhookDeliveries) {
      if (delivery.endpointId === id || !webhookEvents.has(delivery.eventId)) webhookDeliveries.delete(key);
    }
  }

  async findSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<WebhookSubscriber[]> {
    return this.candidates(type, subjectOwnerId).map((row) => ({
      endpoint: toEndpoint(row),
      ownerIsAdmin: this.isAdmin(row.ownerId),
    }));
  }

  async hasSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<boolean> {
    return this.candidates(type, subjectOwnerId).length > 0;
  }

  async recordHealth(endpointId: number, delivered: boolean, at: Date): Promise<void> {
    const row = this.db.tables.webhookEndpoints.get(endpointId);
    if (!row) return;
    if (delivered) row.failingSince = null;
    else row.failingSince ??= at;
  }

  async disableFailingSince(since: Date, now: Date): Promise<number> {
    const failing = this.rows.filter(
      (row) => row.disabledAt === null && row.failingSince !== null && row.failingSince <= since,
    );
    for (const row of failing) row.disabledAt = now;
    return failing.length;
  }

  private isAdmin(accountId: number): boolean {
    return this.db.tables.accounts.get(accountId)?.role === 'admin';
  }

  /** Enabled, subscribed to `type`, and owned by the subject's owner or an administrator (anyone: the catalogue's). */
  private candidates(type: WebhookEventType, subjectOwnerId: number | null): WebhookEndpointRow[] {
    return this.rows.filter(
      (row) =>
        row.events.includes(type) &&
        row.disabledAt === null &&
        (isCatalogueEvent(type) || row.ownerId === subjectOwnerId || this.isAdmin(row.ownerId)),
    );
  }
}

/** Deliveries as `webhook_deliveries` keeps them: one per (event, endpoint), attempts recorded under a guard. */
export class InMemoryWebhookDeliveryRepository extends WebhookDeliveryRepository {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async createFor(eventId: string, endpointIds: number[], now: Date, dueAt = now): Promise<number[]> {
    const { webhookEvents, webhookEndpoints, webhookDeliveries } = this.db.tables;
    const event = webhookEvents.get(eventId);
    const created: number[] = [];
    for (const endpointId of endpointIds) {
      if (!event || !webhookEndpoints.has(endpointId)) {
        throw new ConstraintViolationError('foreign_key', 'webhook_deliveries_fkey', `No event or endpoint.`);
      }
      const exists = [...webhookDeliveries.values()].some((d) => d.eventId === eventId && d.endpointId === endpointId);
      if (exists) continue;
      const id = this.db.nextId('webhookDeliveries');
      webhookDeliveries.set(id, {
        id,
        eventId,
        type: event.type,
        endpointId,
        status: 'pending',
        attempts: 0,
        lastStatusCode: null,
        lastError: null,
        nextAttemptAt: dueAt,
        createdAt: now,
        deliveredAt: null,
      });
      created.push(id);
    }
    return created;
  }

  async queueStats(): Promise<WebhookQueueStats> {
    const pending = [...this.db.tables.webhookDeliveries.values()].filter((row) => row.status === 'pending');
    const due = pending.map((row) => row.nextAttemptAt?.getTime()).filter((at) => at !== undefined);
    return {
      pending: pending.length,
      retrying: pending.filter((row) => row.attempts > 0).length,
      earliestDueAt: due.length ? new Date(Math.min(...due)) : null,
      failingEndpoints: [...this.db.tables.webhookEndpoints.values()].filter(
        (row) => row.failingSince !== null && row.disabledAt === null,
      ).length,
    };
  }

  async findTarget(deliveryId: number): Promise<WebhookAttemptTarget | null> {
    const delivery = this.db.tables.webhookDeliveries.get(deliveryId);
    const endpoint = delivery && this.db.tables.webhookEndpoints.get(delivery.endpointId);
    const event = delivery && this.db.tables.webhookEvents.get(delivery.eventId);
    if (!delivery || !endpoint || !event) return null;
    return {
      delivery: structuredClone(delivery),
      url: endpoint.url,
      secret: endpoint.secret,
      previousSecret: endpoint.previousSecret,
      previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
      endpointDisabled: endpoint.disabledAt !== null,
      endpointFailing: endpoint.failingSince !== null,
      body: event.body,
      // The fake's transactions run one at a time: a committed event is settled (InMemoryEventLog).
      position: event.endpointId === null ? positionOf(event.seq) : null,
      settled: true,
    };
  }

  async recordAttempt(outcome: WebhookAttemptOutcome): Promise<boolean> {
    const row = this.db.tables.webhookDeliveries.get(outcome.deliveryId);
    if (!row || row.attempts !== outcome.previousAttempts || row.status !== 'pending') return false;
    row.attempts = outcome.attempt;
    row.status = outcome.status;
    row.lastStatusCode = outcome.statusCode;
    row.lastError = outcome.error?.slice(0, 1000) ?? null;
    row.nextAttemptAt = outcome.nextAttemptAt;
    row.deliveredAt = outcome.status === 'delivered' ? outcome.at : null;
    return true;
  }

  async requeue(
    endpointId: number,
    deliveryId: number,
    now: () => Date,
  ): Promise<WebhookDelivery | 'pending' | 'not_found'> {
    const row = this.db.tables.webhookDeliveries.get(deliveryId);
    if (!row || row.endpointId !== endpointId) return 'not_found';
    const at = now();
    if (row.status === 'pending' && (row.nextAttemptAt === null || row.nextAttemptAt <= at)) return 'pending';
    row.status = 'pending';
    row.nextAttemptAt = at;
    return structuredClone(row);
  }

  async recoverSince(
    { endpointId, since, all, limit }: RecoveryRequest,
    now: () => Date,
  ): Promise<RecoveredDeliveries> {
    this.db.assertInTransaction('recoverSince');
    // The store's transactions run one at a time: what is read is what is locked.
    const at = now();
    const recoverable = (row: WebhookDelivery) =>
      row.status === 'failed' ||
      (row.status === 'pending' && row.nextAttemptAt !== null && row.nextAttemptAt > at) ||
      (all && row.status === 'delivered');
    const rows = [...this.db.tables.webhookDeliveries.values()]
      .filter((row) => row.endpointId === endpointId && row.createdAt >= since && row.type !== 'ping')
      .filter(recoverable)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id)
      .slice(0, limit + 1);
    const { batch, nextSince } = recoveryBatch(rows, limit, (row) => row.createdAt);
    for (const row of batch) {
      row.status = 'pending';
      row.nextAttemptAt = at;
    }
    return { requeued: batch.map((row) => ({ id: row.id, nextAttemptAt: at })), nextSince };
  }

  async listForEndpoint(endpointId: number, { limit, afterId }: PageRequest): Promise<Page<WebhookDelivery>> {
    const rows = [...this.db.tables.webhookDeliveries.values()]
      .filter((row) => row.endpointId === endpointId && (afterId === undefined || row.id < afterId))
      .sort((a, b) => b.id - a.id)
      .slice(0, limit + 1);
    return pageFromRows(
      rows.map((row) => structuredClone(row)),
      limit,
      (delivery) => delivery.id,
    );
  }
}

/** Each account's outbound budget as `webhook_outbound_budgets` keeps it: a theoretical arrival time per account. */
export class InMemoryWebhookOutboundBudget extends WebhookOutboundBudget {
  constructor(
    private readonly db: InMemoryDatabase,
    private readonly clock: Clock,
    private readonly settings = new WebhookOutboundSettings(),
  ) {
    super();
  }

  async reserve(counts: ReadonlyMap<number, number>): Promise<Map<number, number>> {
    const interval = this.settings.intervalMs;
    const waits = new Map([...counts.keys()].map((ownerId) => [ownerId, 0]));
    if (interval === null) return waits;
    this.db.assertInTransaction('WebhookOutboundBudget.reserve');
    const { webhookOutboundBudgets } = this.db.tables;
    const now = this.clock.now().getTime();
    for (const [ownerId, count] of counts) {
      if (count === 0) continue;
      const tat = Math.max(webhookOutboundBudgets.get(ownerId)?.getTime() ?? 0, now) + count * interval;
      webhookOutboundBudgets.set(ownerId, new Date(tat));
      waits.set(ownerId, this.settings.delayMs(tat - now, count));
    }
    return waits;
  }
}

/** The fan-out jobs, in the store's transaction (as pg-boss's are in PostgreSQL's). */
export class InMemoryWebhookFanOutQueue extends WebhookFanOutQueue {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async schedule(eventId: string): Promise<void> {
    this.db.assertInTransaction('WebhookFanOutQueue.schedule');
    this.db.tables.webhookJobs.push({ queue: 'fan-out', eventId });
  }
}

/** The delivery jobs, in the store's transaction (as pg-boss's are in PostgreSQL's). */
export class InMemoryWebhookDeliveryQueue extends WebhookDeliveryQueue {
  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  async schedule(deliveryId: number, at: Date | null, due?: Date): Promise<void> {
    this.db.assertInTransaction('WebhookDeliveryQueue.schedule');
    this.db.tables.webhookJobs.push({ queue: 'delivery', deliveryId, at, ...(due ? { due } : {}) });
  }

  async scheduleMany(deliveryIds: number[], at: Date | null, due?: Date): Promise<void> {
    for (const deliveryId of deliveryIds) await this.schedule(deliveryId, at, due);
  }

  async scheduleNow(jobs: ReadonlyArray<{ deliveryId: number; due: Date }>): Promise<void> {
    this.db.assertInTransaction('WebhookDeliveryQueue.scheduleNow');
    for (const { deliveryId, due } of jobs)
      this.db.tables.webhookJobs.push({ queue: 'delivery', deliveryId, at: null, due });
  }
}

/** Endpoint changes: announced in the transaction, delivered to the subscribers at commit; always listening. */
export class InMemoryWebhookEndpointChanges extends WebhookEndpointChanges {
  private readonly subscribers: EndpointChangeSubscriber[] = [];
  /** Announcements delivered (committed). */
  announced = 0;

  constructor(private readonly db: InMemoryDatabase) {
    super();
  }

  get listening(): boolean {
    return true;
  }

  async announce(): Promise<void> {
    this.db.afterCommit(() => {
      this.announced++;
      for (const subscriber of this.subscribers) subscriber.changed();
    });
  }

  subscribe(subscriber: EndpointChangeSubscriber): void {
    this.subscribers.push(subscriber);
  }
}

/** The receiver's side, scripted: each send takes the next answer (200 when none is left) and is recorded. */
export class ScriptedWebhookSender extends WebhookSender {
  readonly requests: WebhookRequest[] = [];
  private readonly answers: WebhookResponse[] = [];

  answer(...responses: WebhookResponse[]): this {
    this.answers.push(...responses);
    return this;
  }

  private held: Promise<void> | null = null;

  /** Until the returned function is called, every request waits for its answer (a slow receiver). */
  hold(): () => void {
    let release = () => undefined as void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.held = null;
      release();
    };
  }

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    this.requests.push(request);
    if (this.held) await this.held;
    return this.answers.shift() ?? { statusCode: 200, error: null };
  }
}

/** `whsec_1`, `whsec_2`, …: secrets a test can predict. */
export class CountingWebhookSecrets extends WebhookSecrets {
  private issued = 0;

  generate(): string {
    return `whsec_${++this.issued}`;
  }
}

/** Refuses the URLs it was told to (as an address inside the network would be); allows the rest. */
export class ListedWebhookUrlPolicy extends WebhookUrlPolicy {
  readonly refused = new Set<string>();

  async check(url: string): Promise<void> {
    if (this.refused.has(url)) throw new WebhookUrlRefusedError('the URL is not allowed');
  }
}
