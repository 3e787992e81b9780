import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { LoggedEvent } from '@petstore/application';
import { WEBHOOK_EVENT_TYPES, WebhookEventType } from '@petstore/domain';
import { ArrayMaxSize, IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { IsDateTime } from '../common/validation/date-time';
import { QueryList } from '../common/validation/query-transforms';

@ApiSchema({
  name: 'EventLogEntry',
  description:
    'A change, as it was (or would have been) POSTed to webhook endpoints: `type`, `timestamp` and `data` are ' +
    'exactly the webhook body (the event schema of its type: `OrderPlacedEvent`…, see `WebhookEvent`), `id` its ' +
    '`webhook-id` header.',
})
export class EventDto {
  @ApiProperty({ description: "The event's id: the `webhook-id` header of its deliveries.", format: 'uuid' })
  id: string;

  @ApiProperty({ enum: [...WEBHOOK_EVENT_TYPES], enumName: 'EventType', example: 'order.placed' })
  type: WebhookEventType;

  @ApiProperty({ description: 'When the change happened (ISO 8601, UTC).', format: 'date-time' })
  timestamp: string;

  @ApiProperty({
    description:
      'The resource as this API returned it right after the change (a deleted one as it was): an Order ' +
      '(`order.*`), a Pet (`pet.*`), a Category (`category.*`), an InventoryItem (`inventory.changed`) or a ' +
      'Message (`message.delivered`).',
    type: 'object',
    additionalProperties: true,
  })
  data: Record<string, unknown>;

  /** The stored webhook body, parsed: exactly what an endpoint received. */
  static from(event: LoggedEvent): EventDto {
    const body = JSON.parse(event.body) as Omit<EventDto, 'id'>;
    return Object.assign(new EventDto(), { id: event.id, type: body.type, timestamp: body.timestamp, data: body.data });
  }
}

export class EventListQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    description: 'Only events of these types (repeat the parameter, or separate with commas).',
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
    maxItems: WEBHOOK_EVENT_TYPES.length,
  })
  @IsOptional()
  @QueryList()
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true })
  type?: WebhookEventType[];

  @ApiPropertyOptional({
    description: 'Only events at or after this time (ISO 8601 with a time zone).',
    format: 'date-time',
    example: '2026-11-01T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime()
  createdAfter?: string;

  @ApiPropertyOptional({
    description: 'Only events before this time (ISO 8601 with a time zone).',
    format: 'date-time',
    example: '2026-11-02T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime()
  createdBefore?: string;
}
