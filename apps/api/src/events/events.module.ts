import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import {
  EventBodies,
  EventConsumers,
  EventLog,
  EventOutbox,
  EventPayloads,
  EventQueries,
  EventRecorder,
  EventRetention,
  FeedPositionTokens,
  OutboxEventRecorder,
  PurgeEvents,
  ServiceSecrets,
} from '@petstore/application';
import { PgEventLog, PgEventOutbox, PgServiceSecrets } from '@petstore/infrastructure';
import { ConfigPart } from '../config/app-config';
import { configToken } from '../config/config.module';
import { SliceJobs } from '../jobs/scheduled-jobs';
import { EventConsumerRegistry } from './event-consumer-registry';
import { ApiEventPayloads } from './event-payloads';
import { EventPositions } from './event-positions';
import { EventsController } from './events.controller';

/** The events' scheduled job: the log is purged after EVENT_RETENTION_DAYS (the `events` settings). */
export const EVENTS_JOBS: SliceJobs = {
  scheduled: [{ name: 'purge-events', cron: '41 * * * *', useCase: PurgeEvents }],
};

/**
 * Events: the facts the slices record (EventRecorder, the one port catalogue, ordering and messaging import; each type
 * declared once, in the domain's EVENT_CATALOGUE), kept in the outbox that is also the log `GET /events` reads, their
 * payloads (EVENT_SUBJECT_VIEWS), their consumers (EventConsumers: EventConsumerRegistry registers every provider
 * with an `@OnEventRecorded()` method, webhooks' fan-out; events know no consumer), and the bodies they are sent
 * with (EventBodies: by webhooks and the event relay alike, each with its feed position, whose key EventPositions
 * reads from the database's secret). Its controller is EventsHttpModule, which the assembly adds for the `http` role.
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: EventRetention,
      useFactory: (events: ConfigPart<'events'>) => new EventRetention(events.retentionDays),
      inject: [configToken('events')],
    },
    { provide: EventPayloads, useClass: ApiEventPayloads },
    { provide: EventOutbox, useClass: PgEventOutbox },
    { provide: EventLog, useClass: PgEventLog },
    EventConsumers,
    EventConsumerRegistry,
    OutboxEventRecorder,
    { provide: EventRecorder, useExisting: OutboxEventRecorder },
    EventQueries,
    PurgeEvents,
    { provide: ServiceSecrets, useClass: PgServiceSecrets },
    EventPositions,
    { provide: FeedPositionTokens, useExisting: EventPositions },
    EventBodies,
  ],
  // EventLog: the relay (EventRelayModule) follows its feed. EventRetention: webhooks recover no further back.
  // EventBodies: webhooks and the relay send with it.
  exports: [
    EventRecorder,
    OutboxEventRecorder,
    EventConsumers,
    EventOutbox,
    EventLog,
    EventQueries,
    PurgeEvents,
    EventRetention,
    EventPositions,
    EventBodies,
  ],
})
export class EventsModule {}

/** `/events` (the `http` role), its positions and cursors those of EventPositions. */
@Module({
  imports: [EventsModule],
  controllers: [EventsController],
})
export class EventsHttpModule {}
