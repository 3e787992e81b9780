import type { EventPositions } from './event-positions';
import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { LoggedEvent } from '@petstore/application';
import { EventSubjectKind, eventTypesWhere, WEBHOOK_EVENT_TYPES, WebhookEventType } from '@petstore/domain';
import { ArrayMaxSize, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { IsDateTime } from '../common/validation/date-time';
import { QueryList } from '../common/validation/query-transforms';
import { EVENT_SUBJECT_VIEWS } from './event-payloads';
import { eventTypeProse } from './event-type-prose';

/** What an event's `data` may be: each kind of subject with the event types about it (an Order (`order.*`), …). */
const KINDS = (Object.keys(EVENT_SUBJECT_VIEWS) as EventSubjectKind[]).map((subject) => {
  const article = /^[AEIOU]/.test(subject) ? 'an' : 'a';
  return `${article} ${subject} (${eventTypeProse(eventTypesWhere({ subject }))})`;
});
const SUBJECTS = `${KINDS.slice(0, -1).join(', ')} or ${KINDS.at(-1)}`;

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

  @ApiProperty({ enum: [...WEBHOOK_EVENT_TYPES], enumName: 'EventType', example: WEBHOOK_EVENT_TYPES[0] })
  type: WebhookEventType;

  @ApiProperty({ description: 'When the change happened (ISO 8601, UTC).', format: 'date-time' })
  timestamp: string;

  @ApiProperty({
    description: `The resource as this API returned it right after the change (a deleted one as it was): ${SUBJECTS}.`,
    type: 'object',
    additionalProperties: true,
  })
  data: Record<string, unknown>;

  @ApiPropertyOptional({
    description:
      'Where the event is in the commit-order feed: send it as `startingAfter` to list the events after it ' +
      '(`endingBefore`: those before it). Opaque. Present once the event is settled, that is once every ' +
      'transaction that began writing before its own has ended (at once, unless writers are still in flight); ' +
      'always present in the commit-order feed (`order=commit`).',
    example: 'Vq3f0cJm8Xo2bT7uYxN1aQkLp9sRz4eW',
  })
  position?: string;

  /** The stored webhook body, parsed: exactly what an endpoint received, with its id and, if settled, position. */
  static from(event: LoggedEvent, positions: EventPositions): EventDto {
    const body = JSON.parse(event.body) as Omit<EventDto, 'id' | 'position'>;
    const dto = Object.assign(new EventDto(), {
      id: event.id,
      type: body.type,
      timestamp: body.timestamp,
      data: body.data,
    });
    if (event.position !== null) dto.position = positions.feedToken(event.position);
    return dto;
  }
}

/** The two orders of `GET /events`. */
export const EVENT_ORDERS = ['newest', 'commit'] as const;
export type EventOrder = (typeof EVENT_ORDERS)[number];

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
    description:
      'Only events at or after this time (inclusive, despite its name; ISO 8601 with a time zone). The time is the ' +
      "event's `timestamp`, taken by the service before its transaction commits: an event can commit after a later " +
      'one, so a time is no checkpoint to resume from (resume with `startingAfter`).',
    format: 'date-time',
    example: '2026-11-01T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime()
  createdAfter?: string;

  @ApiPropertyOptional({
    description:
      'Only events before this time (exclusive; ISO 8601 with a time zone). With a time filter a newest-first page ' +
      'looks at no more than 1,000 events below its cursor: a page may hold fewer items than `limit`, even none, and ' +
      'still link to the next; follow `Link` to the end.',
    format: 'date-time',
    example: '2026-11-02T00:00:00Z',
  })
  @IsOptional()
  @IsDateTime()
  createdBefore?: string;

  @ApiPropertyOptional({
    description:
      '`newest` (the default): newest first, paged by `cursor`. `commit`: the feed, oldest first in commit order, ' +
      'each event with its `position`, paged by `startingAfter` (the `Link` `rel="next"`) and `endingBefore` ' +
      '(`rel="prev"`); `startingAfter` or `endingBefore` alone imply it.',
    enum: [...EVENT_ORDERS],
    default: 'newest',
  })
  @IsOptional()
  @IsIn(EVENT_ORDERS)
  order?: EventOrder;

  @ApiPropertyOptional({
    description:
      "The commit-order feed after this `position` (an event's, or the last one you processed): every event listed " +
      'after it, including one whose transaction committed after later-numbered ones, which the feed lists only ' +
      'once every transaction before it has ended. Not with `cursor` or `endingBefore`.',
    maxLength: 200,
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  startingAfter?: string;

  @ApiPropertyOptional({
    description:
      'The commit-order feed before this `position`: the `limit` events just before it, oldest first. Not with ' +
      '`cursor` or `startingAfter`.',
    maxLength: 200,
  })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  endingBefore?: string;
}
