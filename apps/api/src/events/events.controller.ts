import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { EventQueries } from '@petstore/application';
import { Account, isEventId } from '@petstore/domain';
import { Auth, CurrentAccount } from '../common/auth/auth.decorators';
import { ApiError } from '../common/errors/api-error';
import { Stability } from '../openapi/stability.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { EventDto, EventListQueryDto } from './event.dto';
import { ReadsFromReplica } from '../database/replica-reads';

const VISIBILITY =
  'A customer sees the events of its own orders and messages; an administrator sees every event, and alone ' +
  "sees `pet.status_changed` (about the store's pets: administrators only, as for webhooks). Every change is " +
  'recorded, whether or not an endpoint subscribes; events are kept for `EVENT_RETENTION_DAYS` (30 by default).';

@ApiTags('events')
@Auth()
@Stability('beta')
@Controller('events')
export class EventsController {
  constructor(private readonly queries: EventQueries) {}

  @ReadsFromReplica()
  @Get()
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'The events you may see, newest first',
    description: `${VISIBILITY} Paginated like every list; the filters are kept in the \`Link\` header's URL.`,
  })
  @ApiOkResponse({ type: [EventDto], headers: ApiNextPageLink })
  async list(@Query() query: EventListQueryDto, @CurrentAccount() account: Account): Promise<Paginated<EventDto>> {
    const request = pageRequest(query);
    const filter = {
      types: query.type,
      createdAfter: query.createdAfter === undefined ? undefined : new Date(query.createdAfter),
      createdBefore: query.createdBefore === undefined ? undefined : new Date(query.createdBefore),
    };
    return Paginated.of(await this.queries.list(account, filter, request), request, EventDto.from);
  }

  @ReadsFromReplica()
  @Get(':eventId')
  @ApiOperation({ operationId: 'getEvent', summary: 'An event', description: VISIBILITY })
  @ApiParam({
    name: 'eventId',
    description: "The event's id (a UUID: the `webhook-id` of its deliveries).",
    schema: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
  })
  @ApiOkResponse({ type: EventDto })
  async get(@Param('eventId') id: string, @CurrentAccount() account: Account): Promise<EventDto> {
    if (!isEventId(id)) {
      throw ApiError.validation('eventId must be a UUID.', [{ field: 'eventId', message: 'eventId must be a UUID' }]);
    }
    return EventDto.from(await this.queries.get(id.toLowerCase(), account));
  }
}
