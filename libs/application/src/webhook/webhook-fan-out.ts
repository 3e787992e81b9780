import { Injectable } from '@nestjs/common';
import { OnEventRecorded, OutboxEventRecorder, RecordedEvent } from '../events/event-recorder';
import { SubscriberCache } from './subscriber-cache';
import { WebhookFanOutQueue } from './webhook.ports';

/**
 * Webhooks' subscription to the events: a recorded fact gets its fan-out job (in the recording transaction) only
 * when some endpoint may receive it: most changes have no subscriber, and then cost the event's INSERT alone (the
 * question is usually answered from memory). An endpoint created less than a second before the change commits may
 * miss it (SubscriberCache); the event is in the log all the same. A consumer of the events (`@OnEventRecorded`):
 * EventsModule registers it, as every provider with such a method.
 */
@Injectable()
export class WebhookFanOut {
  constructor(
    private readonly subscribers: SubscriberCache,
    private readonly queue: WebhookFanOutQueue,
    private readonly recorder: OutboxEventRecorder,
  ) {}

  @OnEventRecorded()
  async recorded(event: RecordedEvent): Promise<void> {
    if (await this.subscribers.hasSubscribers(event.type, event.subjectOwnerId)) await this.queue.schedule(event.id);
  }

  /** A ping to one endpoint (`POST /webhooks/endpoints/{id}/test`), in the caller's transaction; returns its id. */
  async ping(endpointId: number): Promise<string> {
    const event = await this.recorder.write('ping', null, { endpointId }, endpointId);
    await this.queue.schedule(event.id);
    return event.id;
  }
}
