import { Injectable } from '@nestjs/common';
import { EventPayloadsByKind, EventSubjectViews } from '@petstore/application';
import { CategoryDto } from '../resources/category.dto';
import { InventoryItemDto } from '../resources/inventory.dto';
import { PetDto } from '../resources/pet.dto';
import { MessageDto } from '../resources/message.dto';
import { OrderDto } from '../resources/order.dto';

/**
 * An event's `data` is its subject exactly as the API's own responses show it: one view per kind of subject (the
 * payload schema an event type's definition names, EVENT_CATALOGUE), declared here; a new kind does not compile
 * without its view, a new event type about a kind shown already needs nothing here. The events area reads the
 * slices' DTOs for it, and nothing else of them; the slices know only the EventRecorder port. The order is the one
 * the description of an event's `data` names them in (EventDto).
 */
export const EVENT_SUBJECT_VIEWS: EventSubjectViews<unknown> = {
  Order: (order) => OrderDto.from(order),
  Pet: (pet) => PetDto.from(pet),
  Category: (category) => CategoryDto.from(category),
  InventoryItem: (level) => InventoryItemDto.from(level),
  Message: (message) => MessageDto.from(message),
};

/** EventPayloads by EVENT_SUBJECT_VIEWS. */
@Injectable()
export class ApiEventPayloads extends EventPayloadsByKind {
  constructor() {
    super(EVENT_SUBJECT_VIEWS);
  }
}
