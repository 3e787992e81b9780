import { Injectable } from '@nestjs/common';
import { visibleTo } from '../common/visible-to';
import {
  Account,
  InvalidValueError,
  TooManyWebhookEndpointsError,
  sameWebhookUrl,
  webhookUrlKey,
  WebhookAudience,
  WebhookUrlTakenError,
  WebhookEndpoint,
  WebhookEndpointChange,
  WebhookEndpointNotFoundError,
  LIMITS,
  signingSecrets,
} from '@petstore/domain';
import { Clock, UnitOfWork } from '../ports';
import { Page, PageRequest } from '../common/page';
import { assertPrecondition, Precondition } from '../common/precondition';
import { EventOutbox } from '../events/event.ports';
import { EventBodies } from '../events/event-bodies';
import { AccountRepository } from '../account/account.repository';
import { WebhookFanOut } from './webhook-fan-out';
import { SubscriberCache, WebhookEndpointChanges } from './subscriber-cache';
import { WebhookDeliveryOffError } from './webhook.errors';
import { WebhookEndpointConcurrency } from './endpoint-concurrency';
import {
  WebhookDelivery,
  WebhookDeliveryQueue,
  WebhookDeliveryRepository,
  WebhookDeliveryStatus,
  WebhookDeliverySwitch,
  WebhookEndpointRepository,
  WebhookOutboundBudget,
  WebhookResponse,
  WebhookSecrets,
  WebhookSender,
  WebhookRotationSettings,
  WebhookSettings,
  WebhookUrlPolicy,
} from './webhook.ports';

export interface CreateWebhookEndpointCommand {
  url: string;
  events: string[];
  owner: Account;
}

/** `POST /webhooks/endpoints`: the URL is checked (resolved now), then the endpoint stored under the owner's lock. */
@Injectable()
export class CreateWebhookEndpoint {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly accounts: AccountRepository,
    private readonly urls: WebhookUrlPolicy,
    private readonly secrets: WebhookSecrets,
    private readonly clock: Clock,
    private readonly changes: WebhookEndpointChanges,
    private readonly subscribers: SubscriberCache,
  ) {}

  /** Receives events from the next change on this instance, and within a second on the others. */
  async execute(command: CreateWebhookEndpointCommand): Promise<WebhookEndpoint> {
    const endpoint = WebhookEndpoint.create({
      id: await this.endpoints.nextId(),
      ownerId: command.owner.id,
      ownerIsAdmin: command.owner.isAdmin,
      url: command.url,
      events: command.events,
      secret: this.secrets.generate(),
      now: this.clock.now(),
    });
    // Resolving a name takes time: done before the transaction, so no lock waits on DNS.
    await this.urls.check(endpoint.url);
    await this.uow.run(async () => {
      await this.accounts.lock(endpoint.ownerId);
      if ((await this.endpoints.countByOwner(endpoint.ownerId)) >= LIMITS.webhookEndpoints.max) {
        throw new TooManyWebhookEndpointsError();
      }
      await refuseTakenUrl(this.endpoints, endpoint);
      await this.endpoints.add(endpoint);
      await this.changes.announce();
    });
    this.subscribers.changed();
    return endpoint;
  }
}

/**
 * One endpoint per URL in an account (issue 48, item 8): with the owner's row locked (`AccountRepository.lock`), so
 * that two concurrent requests cannot both pass. Another endpoint of the account on the same URL is a 409; rows made
 * before the rule (or by the previous release) stay, and the fan-out sends each event once per URL
 * (`FanOutWebhookEvent`).
 */
async function refuseTakenUrl(endpoints: WebhookEndpointRepository, endpoint: WebhookEndpoint): Promise<void> {
  const own = await endpoints.listByOwner(endpoint.ownerId, { limit: LIMITS.pageSize.max });
  const taken = own.items.find((other) => other.id !== endpoint.id && sameWebhookUrl(other.url, endpoint.url));
  if (taken) throw new WebhookUrlTakenError(taken.id);
}

/** Reads and deletes: an endpoint is its owner's (or an administrator's); another's is not found. */
@Injectable()
export class WebhookEndpointQueries {
  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly deliveryLog: WebhookDeliveryRepository,
  ) {}

  async get(id: number, viewer: Account): Promise<WebhookEndpoint> {
    return visibleTo(await this.endpoints.findById(id), viewer, () => new WebhookEndpointNotFoundError(id));
  }

  /** The viewer's own endpoints. */
  list(viewer: Account, page: PageRequest): Promise<Page<WebhookEndpoint>> {
    return this.endpoints.listByOwner(viewer.id, page);
  }

  async deliveries(id: number, viewer: Account, page: PageRequest): Promise<Page<WebhookDelivery>> {
    await this.get(id, viewer);
    return this.deliveryLog.listForEndpoint(id, page);
  }
}

@Injectable()
export class DeleteWebhookEndpoint {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly changes: WebhookEndpointChanges,
    private readonly subscribers: SubscriberCache,
  ) {}

  /** `precondition`: the state the caller expects the endpoint in (If-Match), checked under its row lock. */
  async execute(id: number, viewer: Account, precondition?: Precondition<WebhookEndpoint>): Promise<void> {
    await this.uow.run(async () => {
      const endpoint = visibleTo(await this.endpoints.lockById(id), viewer, () => new WebhookEndpointNotFoundError(id));
      assertPrecondition(precondition, endpoint);
      await this.endpoints.delete(id);
      await this.changes.announce();
    });
    this.subscribers.changed();
  }
}

export interface UpdateWebhookEndpointCommand extends WebhookEndpointChange {
  id: number;
  viewer: Account;
  /** The state the caller expects the endpoint in (If-Match), checked under its row lock. */
  precondition?: Precondition<WebhookEndpoint>;
}

/**
 * `PATCH /webhooks/endpoints/{id}`: the URL and the events by the rules of creation (the events by the owner's
 * role, whoever edits), and enabling a disabled endpoint again (its failing streak starts afresh, as it does when
 * the URL changes). Announced to every instance as a creation is: the new events apply from the next change on
 * this instance and within a second on the others; the URL and the secrets are read by every attempt anyway.
 */
@Injectable()
export class UpdateWebhookEndpoint {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly accounts: AccountRepository,
    private readonly urls: WebhookUrlPolicy,
    private readonly clock: Clock,
    private readonly changes: WebhookEndpointChanges,
    private readonly subscribers: SubscriberCache,
  ) {}

  async execute(command: UpdateWebhookEndpointCommand): Promise<WebhookEndpoint> {
    const { id, viewer, precondition, ...change } = command;
    // Not yours is not found, whatever the URL; then the URL is resolved before the transaction (no lock waits on DNS).
    visibleTo(await this.endpoints.findById(id), viewer, () => new WebhookEndpointNotFoundError(id));
    if (change.url !== undefined) await this.urls.check(change.url);
    const updated = await this.uow.run(async () => {
      const locked = await this.endpoints.lockWithOwner(id);
      const endpoint = visibleTo(locked?.endpoint ?? null, viewer, () => new WebhookEndpointNotFoundError(id));
      assertPrecondition(precondition, endpoint);
      const changed = endpoint.change(change, locked?.ownerIsAdmin === true, this.clock.now());
      if (!sameWebhookUrl(changed.url, endpoint.url)) {
        await this.accounts.lock(endpoint.ownerId); // after the endpoint's row, as no other path locks both
        await refuseTakenUrl(this.endpoints, changed);
      }
      const enabledAgain = endpoint.disabledAt !== null && changed.disabledAt === null;
      await this.endpoints.update(changed, { resetHealth: enabledAgain || changed.url !== endpoint.url });
      await this.changes.announce();
      return changed;
    });
    this.subscribers.changed();
    return updated;
  }
}

export interface RotatedWebhookSecret {
  endpoint: WebhookEndpoint;
  /** When the previous secret stops signing. */
  previousSecretExpiresAt: Date;
}

/**
 * `POST /webhooks/endpoints/{id}/secret/rotate` (Standard Webhooks rotation): a new secret signs every delivery
 * from now on, and the one it replaces signs beside it for a window (WebhookRotationSettings, or shorter when
 * the caller asks), so that a receiver can switch without rejecting a delivery. Rotating again during a window
 * replaces the previous secret: the one before it stops signing at once. Nothing is announced: no instance
 * caches a secret, every attempt reads them.
 */
@Injectable()
export class RotateWebhookSecret {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly secrets: WebhookSecrets,
    private readonly settings: WebhookRotationSettings,
    private readonly clock: Clock,
  ) {}

  async execute(id: number, viewer: Account, windowSeconds?: number): Promise<RotatedWebhookSecret> {
    const max = this.settings.windowSeconds;
    if (
      windowSeconds !== undefined &&
      !(Number.isInteger(windowSeconds) && windowSeconds >= 0 && windowSeconds <= max)
    ) {
      throw new InvalidValueError('expiresInSeconds', `expiresInSeconds must be an integer from 0 to ${max}.`);
    }
    return this.uow.run(async () => {
      const locked = await this.endpoints.lockWithOwner(id);
      const endpoint = visibleTo(locked?.endpoint ?? null, viewer, () => new WebhookEndpointNotFoundError(id));
      const previousSecretExpiresAt = new Date(this.clock.now().getTime() + (windowSeconds ?? max) * 1000);
      const rotated = endpoint.rotateSecret(this.secrets.generate(), previousSecretExpiresAt);
      await this.endpoints.update(rotated, { resetHealth: false });
      return { endpoint: rotated, previousSecretExpiresAt };
    });
  }
}

/** `POST /webhooks/endpoints/{id}/test`: a `ping` event for that endpoint alone; returns its id. */
@Injectable()
export class PingWebhookEndpoint {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly fanOut: WebhookFanOut,
    private readonly sending: WebhookDeliverySwitch = new WebhookDeliverySwitch(),
  ) {}

  execute(id: number, viewer: Account): Promise<string> {
    return this.uow.run(async () => {
      const endpoint = visibleTo(await this.endpoints.findById(id), viewer, () => new WebhookEndpointNotFoundError(id));
      if (!this.sending.on) throw new WebhookDeliveryOffError();
      return this.fanOut.ping(endpoint.id);
    });
  }
}

/**
 * Run by the job queue for each event of the outbox: one delivery (and its job) per endpoint that
 * receives it, in one transaction. Run again (a retried job), it creates only what is missing.
 */
@Injectable()
export class FanOutWebhookEvent {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly outbox: EventOutbox,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly queue: WebhookDeliveryQueue,
    private readonly clock: Clock,
    private readonly budget: WebhookOutboundBudget,
  ) {}

  /** Returns the number of deliveries created. */
  async execute(eventId: string): Promise<number> {
    return (await this.run(eventId)).created;
  }

  /**
   * The deliveries created, and how many of them the owners' outbound budgets deferred (they start later). A ping
   * spends no outbound budget here: the request that asked for it was charged (WEBHOOK_OUTBOUND_PER_MINUTE).
   */
  run(eventId: string): Promise<{ created: number; deferred: number }> {
    return this.uow.run(async () => {
      const event = await this.outbox.findById(eventId);
      if (!event) return { created: 0, deferred: 0 };
      if (event.type === 'ping') {
        const endpoint = event.endpointId === null ? null : await this.endpoints.findById(event.endpointId);
        const created = await this.deliveries.createFor(event.id, endpoint ? [endpoint.id] : [], this.clock.now());
        await this.queue.scheduleMany(created, null);
        return { created: created.length, deferred: 0 };
      }
      const type = event.type;
      const subscribers = await this.endpoints.findSubscribers(type, event.subjectOwnerId);
      // One delivery per URL of an account (its lowest endpoint id, subscribers come in id order): endpoints made
      // before one URL per account was the rule, or by the previous release, each made the service send the event
      // to that URL once more (issue 48, item 8).
      const urls = new Set<string>();
      const targets = subscribers
        .filter(({ endpoint, ownerIsAdmin }) =>
          WebhookAudience.receives({ id: endpoint.ownerId, isAdmin: ownerIsAdmin }, type, event.subjectOwnerId),
        )
        .filter(({ endpoint }) => {
          const key = `${endpoint.ownerId} ${webhookUrlKey(endpoint.url)}`;
          return !urls.has(key) && Boolean(urls.add(key));
        })
        .map(({ endpoint }) => endpoint);
      // Each account's deliveries are taken from its outbound budget (issue 48, item 8), every account in one go;
      // beyond the budget they are deferred, not dropped. The deliveries of one wait are made in one statement, and
      // their jobs in one more (usually every account waits 0: three statements for a fan-out to 1,000 endpoints).
      const owners = new Map<number, number[]>();
      for (const { ownerId, id } of targets) owners.set(ownerId, [...(owners.get(ownerId) ?? []), id]);
      const waits = await this.budget.reserve(new Map([...owners].map(([ownerId, ids]) => [ownerId, ids.length])));
      const byWait = new Map<number, number[]>();
      for (const [ownerId, ids] of owners) {
        const wait = waits.get(ownerId) ?? 0;
        byWait.set(wait, [...(byWait.get(wait) ?? []), ...ids]);
      }
      const now = this.clock.now();
      let created = 0;
      let deferred = 0;
      for (const [wait, endpointIds] of byWait) {
        const startAt = new Date(now.getTime() + wait);
        const ids = await this.deliveries.createFor(event.id, endpointIds, now, startAt);
        // A deferred delivery's job is for that time (`due`): a redelivery that makes it due earlier voids the job.
        await this.queue.scheduleMany(ids, wait > 0 ? startAt : null, wait > 0 ? startAt : undefined);
        created += ids.length;
        if (wait > 0) deferred += ids.length;
      }
      return { created, deferred };
    });
  }
}

/**
 * `deferred`: no attempt made, the endpoint's slots in this process were all taken, or the event's feed position is
 * not final yet (WebhookSettings.SETTLE_WAIT_MS); a job for later was sent.
 */
export type WebhookAttemptResult = 'delivered' | 'retrying' | 'failed' | 'settled' | 'deferred';

/**
 * One attempt of one delivery, run by the job queue. Nothing is locked and no transaction is open
 * during the HTTP call; the outcome, the endpoint's health and the next attempt's job (when one
 * is due) are then recorded in one short transaction, guarded by the attempt number so that a
 * rerun of the same job (its worker died) records nothing twice. At least once: a worker that dies
 * after the call and before the record makes the attempt run again, with the same webhook-id.
 */
@Injectable()
export class DeliverWebhook {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly queue: WebhookDeliveryQueue,
    private readonly sender: WebhookSender,
    private readonly settings: WebhookSettings,
    private readonly clock: Clock,
    /** The body sent: the event's stored body with its feed position, as the event stream's messages carry it. */
    private readonly bodies: EventBodies,
    private readonly concurrency: WebhookEndpointConcurrency = new WebhookEndpointConcurrency(),
  ) {}

  /** `due`: the `nextAttemptAt` the job was scheduled for; a job the delivery has moved on from makes no attempt. */
  async execute(deliveryId: number, due?: Date): Promise<WebhookAttemptResult> {
    const target = await this.deliveries.findTarget(deliveryId);
    if (!target || target.delivery.status !== 'pending') return 'settled';
    if (due && target.delivery.nextAttemptAt?.getTime() !== due.getTime()) return 'settled';
    const { delivery } = target;
    const attempt = delivery.attempts + 1;
    if (target.endpointDisabled) {
      const at = this.clock.now();
      const outcome = { statusCode: null, error: 'endpoint_disabled' as const, nextAttemptAt: null, at };
      const attempts = { attempt: delivery.attempts, previousAttempts: delivery.attempts };
      await this.deliveries.recordAttempt({ deliveryId, ...attempts, status: 'failed', ...outcome });
      return 'failed';
    }
    if (!target.settled) {
      // Its feed position could still have an event appear before it: the same job runs again shortly, no attempt
      // counted (as the feed waits, never for longer than the older writing transaction runs).
      const later = new Date(this.clock.now().getTime() + WebhookSettings.SETTLE_WAIT_MS);
      await this.uow.run(() => this.queue.schedule(deliveryId, later, due));
      return 'deferred';
    }
    const { endpointId } = delivery;
    if (!this.concurrency.tryAcquire(endpointId)) {
      // The endpoint has its share of this worker already: try again shortly, in a job of its own (the delivery's
      // `due` kept, so a redelivery meanwhile still voids it), rather than hold a slot waiting for the receiver.
      const later = new Date(this.clock.now().getTime() + this.concurrency.deferMs(endpointId));
      await this.uow.run(() => this.queue.schedule(deliveryId, later, due));
      return 'deferred';
    }
    const started = Date.now();
    let response: WebhookResponse;
    try {
      response = await this.sender.send({
        url: target.url,
        eventId: delivery.eventId,
        body: this.bodies.sent(target),
        secrets: signingSecrets(target, this.clock.now()),
        timeoutMs: this.settings.timeoutMs,
      });
    } finally {
      this.concurrency.release(endpointId, Date.now() - started);
    }
    const at = this.clock.now();
    const delivered = response.statusCode !== null && response.statusCode >= 200 && response.statusCode < 300;
    // A ping is a check made by hand: it is sent once, never retried (its caller sees the outcome and may ping again).
    const retried = !delivered && delivery.type !== 'ping';
    const nextAttemptAt = retried ? this.settings.nextAttemptAt(attempt, at) : null;
    const status: WebhookDeliveryStatus = delivered ? 'delivered' : nextAttemptAt ? 'pending' : 'failed';
    const error = delivered ? null : (response.error ?? 'http_status');
    const outcome = { deliveryId, attempt, previousAttempts: delivery.attempts, status, error, nextAttemptAt, at };
    const record = () => this.deliveries.recordAttempt({ ...outcome, statusCode: response.statusCode });
    if (delivered && !target.endpointFailing) {
      // The common case in one statement, no transaction: nothing else to write (the endpoint was not failing, and no
      // attempt follows). It was five round trips; at a thousand deliveries a second they were the worker's cost.
      await record();
    } else {
      await this.uow.run(async () => {
        if (!(await record())) return;
        await this.endpoints.recordHealth(delivery.endpointId, delivered, at);
        if (nextAttemptAt) await this.queue.schedule(deliveryId, nextAttemptAt, nextAttemptAt);
      });
    }
    return delivered ? 'delivered' : nextAttemptAt ? 'retrying' : 'failed';
  }
}

/** The job queue gave up on a delivery whose runs kept breaking: it becomes failed, unless settled already. */
@Injectable()
export class GiveUpWebhookDelivery {
  constructor(
    private readonly deliveries: WebhookDeliveryRepository,
    private readonly clock: Clock,
  ) {}

  async execute(deliveryId: number): Promise<boolean> {
    const target = await this.deliveries.findTarget(deliveryId);
    if (!target || target.delivery.status !== 'pending') return false;
    const { attempts, lastStatusCode } = target.delivery;
    return this.deliveries.recordAttempt({
      deliveryId,
      attempt: attempts,
      previousAttempts: attempts,
      status: 'failed',
      statusCode: lastStatusCode,
      error: 'given_up',
      nextAttemptAt: null,
      at: this.clock.now(),
    });
  }
}

/**
 * Scheduled: endpoints whose every delivery failed for WebhookSettings.disableAfterMs are disabled
 * (and the instances told, so that they stop recording events only those endpoints would receive).
 */
@Injectable()
export class DisableFailingWebhookEndpoints {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly endpoints: WebhookEndpointRepository,
    private readonly settings: WebhookSettings,
    private readonly clock: Clock,
    private readonly changes: WebhookEndpointChanges,
    private readonly subscribers: SubscriberCache,
  ) {}

  async execute(): Promise<{ disabled: number }> {
    const now = this.clock.now();
    const since = new Date(now.getTime() - this.settings.disableAfterMs);
    const disabled = await this.uow.run(async () => {
      const count = await this.endpoints.disableFailingSince(since, now);
      if (count > 0) await this.changes.announce();
      return count;
    });
    if (disabled > 0) this.subscribers.changed();
    return { disabled };
  }
}
