import { Injectable, OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { EventConsumers } from '@petstore/application';

/**
 * Registers the process's consumers of the events with EventConsumers, declaratively: every provider of the assembled
 * process whose class has an `@OnEventRecorded()` method (webhooks' WebhookFanOut, when webhooks are part of the
 * process). Nest's DiscoveryService lists the providers; a consumer neither subscribes itself nor is named here. At
 * module init: every provider exists by then, and EventsModule's hooks run before those of the modules importing it,
 * so no module records a fact before its consumers are registered.
 */
@Injectable()
export class EventConsumerRegistry implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly consumers: EventConsumers,
  ) {}

  onModuleInit(): void {
    for (const { instance } of this.discovery.getProviders()) {
      // Request-scoped and transient providers have no instance now; value providers may be anything.
      if (instance !== null && typeof instance === 'object') this.consumers.register(instance);
    }
  }
}
