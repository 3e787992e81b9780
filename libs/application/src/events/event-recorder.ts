import { Injectable } from '@nestjs/common';
import { WebhookEventType } from '@petstore/domain';
import { Clock } from '../ports';
import {
  EVENT_SUBJECT_OWNERS,
  EventName,
  EventOutbox,
  EventPayloads,
  EventRecorder,
  EventSubjects,
  OutboxEvent,
} from './event.ports';

/** A recorded fact (never a ping), as its consumers receive it. */
export type RecordedEvent = OutboxEvent & { type: WebhookEventType };

/** What else a recorded fact causes, in the recording transaction (webhooks: its fan-out job). */
export interface EventConsumer {
  recorded(event: RecordedEvent): Promise<void>;
}

/**
 * The consumers of recorded facts: each subscribes itself (webhooks do, when their module is part of the process).
 * The events area knows none of them; a process without consumers records the facts all the same.
 */
@Injectable()
export class EventConsumers {
  private readonly consumers: EventConsumer[] = [];

  subscribe(consumer: EventConsumer): void {
    this.consumers.push(consumer);
  }

  async recorded(event: RecordedEvent): Promise<void> {
    for (const consumer of this.consumers) await consumer.recorded(event);
  }
}

/**
 * EventRecorder over the outbox: the event is written to the outbox, which is also the event log (`GET /events`), in
 * the same transaction as the change, then handed to its consumers in that transaction too.
 */
@Injectable()
export class OutboxEventRecorder extends EventRecorder {
  constructor(
    private readonly outbox: EventOutbox,
    private readonly payloads: EventPayloads,
    private readonly clock: Clock,
    private readonly consumers: EventConsumers,
  ) {
    super();
  }

  /**
   * Always written (the event log keeps every event); its consumers decide what else it causes (webhooks: a fan-out
   * job only when some endpoint may receive it).
   */
  async record<T extends WebhookEventType>(type: T, subject: EventSubjects[T]): Promise<void> {
    // TypeScript does not correlate `type` with its map entry: the cast says what EventSubjectMap guarantees.
    const owner = (EVENT_SUBJECT_OWNERS[type] as (subject: EventSubjects[T]) => number | null)(subject);
    const event = await this.write(type, owner, this.payloads.data(type, subject), null);
    await this.consumers.recorded(event as RecordedEvent);
  }

  /**
   * Writes one event to the outbox, inside the caller's transaction, and returns it. Also what a webhook `ping`
   * is written with (`endpointId` set: it goes to that endpoint alone, and is never listed).
   */
  async write(type: EventName, subjectOwnerId: number | null, data: unknown, endpointId: number | null) {
    const now = this.clock.now();
    const body = JSON.stringify({ type, timestamp: now.toISOString(), data });
    const event = { id: this.outbox.nextId(), type, subjectOwnerId, endpointId, body, createdAt: now };
    await this.outbox.add(event);
    return event satisfies OutboxEvent;
  }
}
