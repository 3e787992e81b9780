import { Injectable, SetMetadata } from '@nestjs/common';
import { WebhookEventType } from '@petstore/domain';
import { Clock } from '../ports';
import {
  EventName,
  EventOutbox,
  EventPayloads,
  EventRecorder,
  EventSubjects,
  OutboxEvent,
  subjectOwnerOf,
} from './event.ports';

/** A recorded fact (never a ping), as its consumers receive it. */
export type RecordedEvent = OutboxEvent & { type: WebhookEventType };

/** What handles a recorded fact, in the recording transaction. */
export type RecordedEventHandler = (event: RecordedEvent) => Promise<void>;

/** The metadata key of an `@OnEventRecorded()` method. */
const EVENT_HANDLER = 'petstore:on-event-recorded';

/**
 * Marks the method a recorded fact is handed to, in the recording transaction (what else the fact causes: webhooks'
 * fan-out job). Its class is a consumer of the events, registered declaratively: EventsModule hands every provider
 * to EventConsumers.register once the process is assembled, and a test registers the instance it builds; a consumer
 * does not subscribe itself. (immich's `@OnEvent` handlers over its typed event map are the model.)
 */
export function OnEventRecorded() {
  return (target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<RecordedEventHandler>): void => {
    SetMetadata(EVENT_HANDLER, true)(target, key, descriptor);
  };
}

/**
 * The consumers of recorded facts: the `@OnEventRecorded()` methods of the instances registered. The events area
 * knows none of them; a process without consumers records the facts all the same.
 */
@Injectable()
export class EventConsumers {
  private readonly handlers: RecordedEventHandler[] = [];
  private readonly registered = new WeakSet<object>();

  /**
   * Registers the `@OnEventRecorded()` methods of `instance` (none: nothing), once however often it is offered;
   * returns how many it has.
   */
  register(instance: object): number {
    if (this.registered.has(instance)) return 0;
    this.registered.add(instance);
    const names = handlerNames(instance);
    for (const name of names) {
      const handler = (instance as Record<string, RecordedEventHandler>)[name];
      this.handlers.push(handler.bind(instance));
    }
    return names.length;
  }

  async recorded(event: RecordedEvent): Promise<void> {
    for (const handler of this.handlers) await handler(event);
  }
}

/**
 * The names of the decorated methods along the prototype chain, each once. Walked here rather than by Nest's
 * MetadataScanner, which is @nestjs/core's (the application depends on @nestjs/common alone); descriptors are read,
 * so that no getter runs.
 */
function handlerNames(instance: object): string[] {
  const names = new Set<string>();
  for (let proto = Object.getPrototypeOf(instance); proto && proto !== Object.prototype; ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = Object.getOwnPropertyDescriptor(proto, name)?.value;
      if (typeof method === 'function' && Reflect.getMetadata(EVENT_HANDLER, method) === true) names.add(name);
    }
    proto = Object.getPrototypeOf(proto);
  }
  return [...names];
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
    const event = await this.write(type, subjectOwnerOf(type, subject), this.payloads.data(type, subject), null);
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
