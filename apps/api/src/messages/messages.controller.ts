import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { MessageQueries, QueueMessage } from '@petstore/application';
import type { Account } from '@petstore/domain';
import type { FastifyReply } from 'fastify';
import { Auth, CurrentAccount } from '../common/auth/auth.decorators';
import { Conditional } from '../common/conditional/conditional.decorator';
import { Stability } from '../openapi/stability.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { MessageDto, MessageListQueryDto, NewMessageDto } from '../resources/message.dto';
import { ParseMessageIdPipe } from './parse-message-id.pipe';
import { ReadsFromReplica } from '../database/replica-reads';

@ApiTags('messages')
@Auth()
@Stability('beta')
@Controller('messages')
export class MessagesController {
  constructor(
    private readonly queueMessage: QueueMessage,
    private readonly queries: MessageQueries,
  ) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({
    operationId: 'postMessage',
    summary: 'Queue a message (the quickstart operation)',
    description:
      'Accepts the message and queues it: `status: "queued"` means it was only queued. A background worker ' +
      'delivers it shortly afterwards (at least once; a message is never lost, even if the service restarts ' +
      'meanwhile); follow `Location` (`GET /messages/{messageId}`) to see `status` become `delivered` (or ' +
      '`failed`, should every delivery attempt fail).',
  })
  @ApiAcceptedResponse({
    description: 'Queued.',
    type: MessageDto,
    headers: {
      Location: { description: "The message's URL, where its status can be followed.", schema: { type: 'string' } },
    },
  })
  async create(
    @Body() body: NewMessageDto,
    @CurrentAccount() account: Account,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MessageDto> {
    const message = await this.queueMessage.execute({ text: body.message, ownerId: account.id });
    void reply.header('Location', `/messages/${message.id}`);
    return MessageDto.from(message);
  }

  @ReadsFromReplica()
  @Get()
  @Auth('admin')
  @ApiOperation({
    operationId: 'listMessages',
    summary: "The store's inbox: every message, oldest first",
    description:
      'Ordered by the time they were queued (an internal sequence, as message ids are UUIDs); ' +
      'paginated like every list.',
  })
  @ApiOkResponse({ type: [MessageDto], headers: ApiNextPageLink })
  async list(@Query() query: MessageListQueryDto): Promise<Paginated<MessageDto>> {
    const request = pageRequest(query);
    return Paginated.of(await this.queries.list({ status: query.status }, request), request, MessageDto.from);
  }

  @ReadsFromReplica()
  @Get(':messageId')
  @ApiOperation({
    operationId: 'getMessage',
    summary: 'Get a message and its delivery status',
    description: "Its sender or an administrator; another customer's message is a 404.",
  })
  @ApiParam({
    name: 'messageId',
    description: "The message's id (a UUID).",
    schema: { type: 'string', format: 'uuid', minLength: 36, maxLength: 36 },
  })
  @ApiOkResponse({ type: MessageDto })
  @Conditional('message')
  async get(
    @Param('messageId', ParseMessageIdPipe) id: string,
    @CurrentAccount() account: Account,
  ): Promise<MessageDto> {
    return MessageDto.from(await this.queries.get(id, account));
  }
}
