import { Injectable } from '@nestjs/common';
import { Message, Order, OrderEventType, Pet, PetStatus, WebhookEventType } from '@petstore/domain';
import { Clock } from '../ports';
import type { WebhookEventName } from './webhook.ports';
import { WebhookEvent, WebhookOutboxStore, WebhookPayloads } from './webhook.ports';
import { SubscriberCache } from './subscriber-cache';

/**
 * What use cases call, inside their `UnitOfWork.run`, to report a change: the event is written to the
 * outbox, which is also the event log (`GET /events`), in the same transaction as the change (a rolled-back
 * change records and sends nothing, a committed one is never lost). Each method returns its subject, so
 * that it fits in the line that produces it.
 */
@Injectable()
export class WebhookEvents {
  constructor(
    private readonly outbox: WebhookOutboxStore,
    private readonly payloads: WebhookPayloads,
    private readonly clock: Clock,
    private readonly subscribers: SubscriberCache,
  ) {}

  async order(type: OrderEventType, order: Order): Promise<Order> {
    await this.add(type, order.ownerId, this.payloads.order(order));
    return order;
  }

  async messageDelivered(message: Message): Promise<Message> {
    await this.add('message.delivered', message.ownerId, this.payloads.message(message));
    return message;
  }

  /**
   * `pet.status_changed` when the pet's status differs from `stored`, the status stored: the caller
   * read it under the pet's lock, which it holds until the change commits (no second read needed).
   */
  async petStatusChange(pet: Pet, stored: PetStatus): Promise<Pet> {
    if (stored !== pet.status) await this.add('pet.status_changed', null, this.payloads.pet(pet));
    return pet;
  }

  /** A ping to one endpoint (`POST /webhooks/endpoints/{id}/test`); returns the event's id. */
  async ping(endpointId: number): Promise<string> {
    const event = this.event('ping', null, { endpointId }, endpointId);
    await this.outbox.add(event, true);
    return event.id;
  }

  /**
   * Always written (the event log keeps every event); its fan-out job only when some endpoint may receive
   * it: most changes have no subscriber, and then cost the event's INSERT alone (the question is usually
   * answered from memory). An endpoint created less than a second before the change commits may miss
   * it (SubscriberCache); the event is in the log all the same.
   */
  private async add(type: WebhookEventType, subjectOwnerId: number | null, data: unknown): Promise<void> {
    const fanOut = await this.subscribers.hasSubscribers(type, subjectOwnerId);
    await this.outbox.add(this.event(type, subjectOwnerId, data, null), fanOut);
  }

  private event(type: WebhookEventName, subjectOwnerId: number | null, data: unknown, endpointId: number | null) {
    const now = this.clock.now();
    const body = JSON.stringify({ type, timestamp: now.toISOString(), data });
    return { id: this.outbox.nextId(), type, subjectOwnerId, endpointId, body, createdAt: now } satisfies WebhookEvent;
  }
}
