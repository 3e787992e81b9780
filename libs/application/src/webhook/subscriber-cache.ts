import { Injectable } from '@nestjs/common';
import type { WebhookEventType } from '@petstore/domain';
import { ExpiringCache } from '../common/expiring-cache';
import { Clock } from '../ports';
import { WebhookEndpointRepository } from './webhook.ports';

/** Told that webhook endpoints changed, on every instance (each instance's SubscriberCache). */
export interface EndpointChangeSubscriber {
  /** An endpoint was created, deleted or disabled somewhere: forget every answer. */
  changed(): void;
  /** Announcements may have been missed (the signal's connection was lost, or was just regained). */
  reset(): void;
}

/**
 * The signal between instances that webhook endpoints changed. A changing use case announces it
 * inside its transaction: it reaches every instance's subscriber once the transaction commits (not
 * at all if it rolls back), within a second while `listening`.
 */
export abstract class WebhookEndpointChanges {
  /** Inside the changing transaction: delivered to every instance at commit. */
  abstract announce(): Promise<void>;
  abstract subscribe(subscriber: EndpointChangeSubscriber): void;
  /** Whether this instance receives announcements now; while it does not, nothing is cached. */
  abstract get listening(): boolean;
}

/** Seconds an answer of `hasSubscribers` is kept: changes arrive through the signal, this only bounds a miss. */
export const SUBSCRIBER_CACHE_SECONDS = 5;

export class SubscriberCacheSettings {
  constructor(
    readonly ttlSeconds = SUBSCRIBER_CACHE_SECONDS,
    /** Answers kept at most (one per event type and subject owner); the oldest makes room. */
    readonly maxEntries = 10_000,
  ) {}
}

/**
 * `WebhookEndpointRepository.hasSubscribers`, answered from memory for a few seconds: an order
 * then reports its event without a database round trip (under its pet's lock). Endpoint changes
 * reach it through WebhookEndpointChanges (this instance's at commit, the others' within a
 * second); while those are not received, every question goes to the database.
 *
 * A lookup that began before a change must not store what it read (ExpiringCache's ticket).
 */
@Injectable()
export class SubscriberCache implements EndpointChangeSubscriber {
  private readonly cache: ExpiringCache<boolean>;

  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly changes: WebhookEndpointChanges,
    clock: Clock,
    private readonly settings: SubscriberCacheSettings,
  ) {
    this.cache = new ExpiringCache(clock, settings.ttlSeconds, settings.maxEntries);
    if (this.enabled) changes.subscribe(this);
  }

  get enabled(): boolean {
    return this.settings.ttlSeconds > 0;
  }

  get size(): number {
    return this.cache.size;
  }

  /** Whether any endpoint may receive an event of `type` about `subjectOwnerId`'s resource. */
  async hasSubscribers(type: WebhookEventType, subjectOwnerId: number | null): Promise<boolean> {
    if (!this.enabled || !this.changes.listening) return this.endpoints.hasSubscribers(type, subjectOwnerId);
    const key = `${type} ${subjectOwnerId ?? ''}`;
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const ticket = this.cache.ticket();
    const found = await this.endpoints.hasSubscribers(type, subjectOwnerId);
    if (this.changes.listening) this.cache.set(key, found, ticket);
    return found;
  }

  /** Endpoints changed (announced by any instance, or just committed here): everything is forgotten. */
  changed(): void {
    this.cache.clear();
  }

  reset(): void {
    this.cache.clear();
  }
}
