import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { EventQueries, FeedPosition } from '@petstore/application';
import { Account, eventTypesWhere, isEventId, LIMITS } from '@petstore/domain';
import { ConditionalPage } from '../common/conditional/conditional.decorator';
import { Auth, CurrentAccount } from '../common/auth/auth.decorators';
import { ApiError } from '../common/errors/api-error';
import { Stability } from '../openapi/stability.decorator';
import { EventPositions } from './event-positions';
import { PageLink, Paginated } from '../common/pagination/paginated';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { EventDto, EventListQueryDto } from './event.dto';
import { eventTypeProse } from './event-type-prose';
import { ReadsFromReplica } from '../database/replica-reads';

/** `startingAfter` and `endingBefore` are the commit-order feed's, one at a time, never with `cursor`. */
function refuseMixedPaging(query: EventListQueryDto): void {
  const refuse = (field: string, message: string) => {
    throw ApiError.validation(`${message}.`, [{ field, message }]);
  };
  if (query.startingAfter !== undefined && query.endingBefore !== undefined)
    refuse('endingBefore', 'endingBefore cannot be sent with startingAfter: page one way at a time');
  if (query.cursor !== undefined)
    refuse(
      'cursor',
      'cursor pages the newest-first list: the commit-order feed pages by startingAfter and endingBefore',
    );
  if (query.order === 'newest')
    refuse('order', 'startingAfter and endingBefore page the commit-order feed: send order=commit, or leave order out');
}

/** The `Link` header of `GET /events`. */
const ApiEventPageLinks = {
  Link: {
    description:
      'Newest first: `<…?cursor=…&limit=…>; rel="next"` while more events exist. In commit order: ' +
      '`<…?startingAfter=…&limit=…>; rel="next"` while more events exist now, and going back with `endingBefore`, ' +
      '`rel="prev"` while older ones exist. The other filters are kept.',
    schema: { type: 'string' },
  },
};

const VISIBILITY =
  "A customer sees the events of its own orders and messages, and the catalogue's " +
  `(${eventTypeProse(eventTypesWhere({ audience: 'everyone' }))}: every account sees them); an administrator sees ` +
  `every event, and alone sees ${eventTypeProse(eventTypesWhere({ audience: 'administrators' }))} (about the ` +
  "store's pets: administrators only, as for webhooks). Every " +
  'change is recorded, whether or not an endpoint subscribes; events are kept for `EVENT_RETENTION_DAYS` (30 by ' +
  'default).';

@ApiTags('events')
@Auth()
@Stability('beta')
@Controller('events')
export class EventsController {
  constructor(
    private readonly queries: EventQueries,
    private readonly positions: EventPositions,
  ) {}

  @ReadsFromReplica()
  @Get()
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'The events you may see, newest first, or in commit order to catch up from a position',
    description:
      `${VISIBILITY} Newest first by default, paginated like every list (\`cursor\`); the filters are kept in the ` +
      "`Link` header's URL. To keep a copy up to date, read the feed instead: `order=commit` lists the events oldest " +
      'first in commit order, each with its `position`; save the last `position` you processed and resume with ' +
      '`startingAfter=<position>`: no event is ever skipped, even one whose transaction committed after ' +
      'later-numbered ones (the feed lists an event once every transaction that began writing before it has ' +
      'ended). `endingBefore=<position>` pages backwards. `Link` `rel="next"` (and `rel="prev"` going back) carry ' +
      'the positions.',
  })
  @ApiOkResponse({ type: [EventDto], headers: ApiEventPageLinks })
  @ApiErrors({
    400:
      '`validation_failed`: a filter, `cursor`, `startingAfter` or `endingBefore` that is not valid, or ' +
      '`startingAfter`/`endingBefore` with each other, with `cursor` or with `order=newest`',
  })
  @ConditionalPage()
  async list(@Query() query: EventListQueryDto, @CurrentAccount() account: Account): Promise<Paginated<EventDto>> {
    const filter = {
      types: query.type,
      createdAfter: query.createdAfter === undefined ? undefined : new Date(query.createdAfter),
      createdBefore: query.createdBefore === undefined ? undefined : new Date(query.createdBefore),
    };
    const { startingAfter, endingBefore } = query;
    if (query.order !== 'commit' && startingAfter === undefined && endingBefore === undefined) {
      // The cursor is a token of EventPositions, not the generic one: a seq in clear would count hidden events.
      const limit = query.limit ?? LIMITS.pageSize.default;
      const afterId = query.cursor === undefined ? undefined : this.positions.listAfter(query.cursor);
      const page = await this.queries.list(account, filter, { limit, afterId });
      const next: PageLink[] =
        page.nextAfterId === null
          ? []
          : [{ rel: 'next', set: { cursor: this.positions.listCursor(page.nextAfterId) }, remove: ['cursor'] }];
      return new Paginated(
        page.items.map((event) => EventDto.from(event, this.positions)),
        null,
        limit,
        next,
      );
    }
    refuseMixedPaging(query);
    const limit = query.limit ?? LIMITS.pageSize.default;
    const after = startingAfter === undefined ? undefined : this.positions.feedPosition(startingAfter, 'startingAfter');
    const before = endingBefore === undefined ? undefined : this.positions.feedPosition(endingBefore, 'endingBefore');
    const page = await this.queries.feed(account, filter, { limit, after, before });
    const items = page.items.map((event) => EventDto.from(event, this.positions));
    const first = page.items[0]?.position;
    const last = page.items.at(-1)?.position;
    const links: PageLink[] = [];
    const going = (rel: PageLink['rel'], name: string, position: FeedPosition): PageLink => ({
      rel,
      set: { [name]: this.positions.feedToken(position) },
      remove: ['cursor', 'startingAfter', 'endingBefore'],
    });
    if (before === undefined) {
      // Forwards: more now, or the end of the log for now (resume from the last position later).
      if (page.hasMore && last) links.push(going('next', 'startingAfter', last));
    } else {
      // Backwards: the events from the last one on follow (at least the one asked before); older ones if any.
      if (last) links.push(going('next', 'startingAfter', last));
      if (page.hasMore && first) links.push(going('prev', 'endingBefore', first));
    }
    return new Paginated(items, null, limit, links);
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
    return EventDto.from(await this.queries.get(id.toLowerCase(), account), this.positions);
  }
}
