import { Injectable } from '@nestjs/common';
import { EventPayloads, EventSubjectMap, EventSubjects } from '@petstore/application';
import type { WebhookEventType } from '@petstore/domain';
import { CategoryDto } from '../resources/category.dto';
import { InventoryItemDto } from '../resources/inventory.dto';
import { PetDto } from '../resources/pet.dto';
import { MessageDto } from '../resources/message.dto';
import { OrderDto } from '../resources/order.dto';

/**
 * An event's `data` is its subject exactly as the API's own responses show it: one entry per event type, declared
 * here (a new type in WEBHOOK_EVENT_TYPES does not compile without its entry). The events area reads the slices'
 * DTOs for it, and nothing else of them; the slices know only the EventRecorder port.
 */
export const EVENT_PAYLOADS: EventSubjectMap<unknown> = {
  'order.placed': (order) => OrderDto.from(order),
  'order.completed': (order) => OrderDto.from(order),
  'order.cancelled': (order) => OrderDto.from(order),
  'pet.status_changed': (pet) => PetDto.from(pet),
  'message.delivered': (message) => MessageDto.from(message),
  'pet.created': (pet) => PetDto.from(pet),
  'pet.updated': (pet) => PetDto.from(pet),
  'pet.deleted': (pet) => PetDto.from(pet),
  'category.created': (category) => CategoryDto.from(category),
  'category.updated': (category) => CategoryDto.from(category),
  'category.deleted': (category) => CategoryDto.from(category),
  'inventory.changed': (level) => InventoryItemDto.from(level),
};

/** EventPayloads by EVENT_PAYLOADS. */
@Injectable()
export class ApiEventPayloads extends EventPayloads {
  data<T extends WebhookEventType>(type: T, subject: EventSubjects[T]): unknown {
    return (EVENT_PAYLOADS[type] as (subject: EventSubjects[T]) => unknown)(subject);
  }
}
