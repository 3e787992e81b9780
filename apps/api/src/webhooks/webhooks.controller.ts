import { chargeWebhookOutbound, WEBHOOK_OUTBOUND_PER_MINUTE } from '../common/rate-limit/rate-limit.hook';
import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import {
  CreateWebhookEndpoint,
  DeleteWebhookEndpoint,
  PingWebhookEndpoint,
  RecoverWebhookDeliveries,
  RetryWebhookDelivery,
  Precondition,
  RotateWebhookSecret,
  UpdateWebhookEndpoint,
  WebhookEndpointQueries,
} from '@petstore/application';
import type { Account, WebhookEndpoint } from '@petstore/domain';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Auth, CurrentAccount } from '../common/auth/auth.decorators';
import { Conditional, ConditionalPage, IfMatch } from '../common/conditional/conditional.decorator';
import { ShowsSecret } from '../idempotency/idempotency.decorators';
import { ApiErrors } from '../openapi/api-errors.decorator';
import { ApiCallbackObjects } from '../openapi/callbacks';
import { Stability } from '../openapi/stability.decorator';
import { pageRequest } from '../common/pagination/cursor';
import { PageQueryDto } from '../common/pagination/page.query.dto';
import { ApiNextPageLink, Paginated } from '../common/pagination/paginated';
import { ParseIdPipe } from '../common/validation/parse-id.pipe';
import { webhookEventCallbacks, webhookEventSchemas } from './webhook-events.openapi';
import {
  CreatedWebhookEndpointDto,
  NewWebhookEndpointDto,
  RotatedWebhookSecretDto,
  WebhookDeliveryDto,
  WebhookEndpointDto,
  WebhookEndpointUpdateDto,
  WebhookPingDto,
  WebhookRecoveryDto,
  WebhookRecoveryRequestDto,
  WebhookSecretRotationRequestDto,
} from './webhook.dto';
import { ReadsFromReplica } from '../database/replica-reads';

/** The most deliveries one recovery queues, as the description writes it (`1,000`). */
const RECOVERY_LIMIT = RecoverWebhookDeliveries.LIMIT.toLocaleString('en');

const DELIVERY =
  'Each event is POSTed as `{"type", "timestamp", "data"}` (`data`: the resource as this API returns it; the ' +
  '`event` callback and the `WebhookEvent` schema describe each type) with the ' +
  'Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature`. A 2xx within 10 s is ' +
  'delivered; anything else is retried after 5 s, 30 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, then failed. ' +
  'The URL must be https://, without credentials, on port 443 (the default) or 1024-65535, and its host must ' +
  'resolve only to public addresses (IPv6 forms that embed an IPv4 address are judged by that address); every ' +
  'URL refused answers the same 400 `invalid_webhook_url`, whichever rule it fails.';

@ApiTags('webhooks')
@Auth()
@Stability('beta')
@Controller('webhooks/endpoints')
export class WebhooksController {
  constructor(
    private readonly createEndpoint: CreateWebhookEndpoint,
    private readonly deleteEndpoint: DeleteWebhookEndpoint,
    private readonly pingEndpoint: PingWebhookEndpoint,
    private readonly queries: WebhookEndpointQueries,
    private readonly retryDelivery: RetryWebhookDelivery,
    private readonly recoverDeliveries: RecoverWebhookDeliveries,
    private readonly updateEndpoint: UpdateWebhookEndpoint,
    private readonly rotateSecret: RotateWebhookSecret,
  ) {}

  @Post()
  @ShowsSecret()
  @ApiOperation({ operationId: 'createWebhookEndpoint', summary: 'Subscribe a URL to events', description: DELIVERY })
  @ApiCallbackObjects(webhookEventCallbacks(), webhookEventSchemas())
  @ApiCreatedResponse({
    type: CreatedWebhookEndpointDto,
    headers: { Location: { description: "The endpoint's URL.", schema: { type: 'string' } } },
  })
  @ApiErrors({
    400: 'The URL is not `https`, or points inside the network (`invalid_webhook_url`).',
    409:
      'The account has 10 endpoints already (`too_many_endpoints`), or one on this URL (`webhook_url_taken`: ' +
      'subscribe that one to more events instead).',
  })
  async create(
    @Body() body: NewWebhookEndpointDto,
    @CurrentAccount() account: Account,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<CreatedWebhookEndpointDto> {
    const endpoint = await this.createEndpoint.execute({ url: body.url, events: body.events, owner: account });
    void reply.header('Location', `/webhooks/endpoints/${endpoint.id}`);
    return CreatedWebhookEndpointDto.withSecret(endpoint);
  }

  @ReadsFromReplica()
  @Get()
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: 'Your webhook endpoints' })
  @ApiOkResponse({ type: [WebhookEndpointDto], headers: ApiNextPageLink })
  @ConditionalPage()
  async list(@Query() query: PageQueryDto, @CurrentAccount() account: Account): Promise<Paginated<WebhookEndpointDto>> {
    const request = pageRequest(query);
    return Paginated.of(await this.queries.list(account, request), request, WebhookEndpointDto.from);
  }

  @ReadsFromReplica()
  @Get(':endpointId')
  @ApiOperation({ operationId: 'getWebhookEndpoint', summary: 'A webhook endpoint (without its secret)' })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @Conditional('webhook endpoint')
  async get(
    @Param('endpointId', ParseIdPipe) id: number,
    @CurrentAccount() account: Account,
  ): Promise<WebhookEndpointDto> {
    return WebhookEndpointDto.from(await this.queries.get(id, account));
  }

  @Patch(':endpointId')
  @ApiOperation({
    operationId: 'updateWebhookEndpoint',
    summary: 'Change a webhook endpoint: URL, events, enabled',
    description:
      'The fields given replace the current ones, by the rules of creation (the URL rules below; the events by ' +
      "the owner's role, also when an administrator edits). `enabled: true` enables a disabled endpoint again. " +
      'Every instance applies the change within a second (the one that made it, from the next event). The ' +
      'secret stays: rotate it with `POST /webhooks/endpoints/{id}/secret/rotate`. ' +
      DELIVERY.slice(DELIVERY.indexOf('The URL must')),
  })
  @ApiOkResponse({ type: WebhookEndpointDto })
  @ApiErrors({
    400: 'The URL is not `https`, or points inside the network (`invalid_webhook_url`).',
    409: 'Another endpoint of the account has this URL (`webhook_url_taken`).',
  })
  @Conditional('webhook endpoint')
  async update(
    @Param('endpointId', ParseIdPipe) id: number,
    @Body() body: WebhookEndpointUpdateDto,
    @CurrentAccount() account: Account,
    @IfMatch(WebhookEndpointDto.from) precondition?: Precondition<WebhookEndpoint>,
  ): Promise<WebhookEndpointDto> {
    return WebhookEndpointDto.from(await this.updateEndpoint.execute({ id, viewer: account, precondition, ...body }));
  }

  @Post(':endpointId/secret/rotate')
  @HttpCode(200)
  @ShowsSecret()
  @ApiOperation({
    operationId: 'rotateWebhookSecret',
    summary: "Rotate the endpoint's signing secret (the old one signs too for a while)",
    description:
      'Standard Webhooks rotation: answers a new secret, which signs every delivery from now on. The old secret ' +
      'signs beside it until `expiresAt` (24 h by default; the body may ask for less): meanwhile each delivery ' +
      'carries `webhook-signature: v1,<new> v1,<old>`, which `standardwebhooks` verifies with either secret, so ' +
      'the receiver can switch to the new one without rejecting a delivery. Rotating again before `expiresAt` ' +
      'replaces the old secret: the one before it stops signing at once. Without a body, the default window.',
  })
  @ApiBody({ type: WebhookSecretRotationRequestDto, required: false })
  @ApiOkResponse({ type: RotatedWebhookSecretDto })
  async rotate(
    @Param('endpointId', ParseIdPipe) id: number,
    @CurrentAccount() account: Account,
    // Optional, not `| undefined`: a union would reach the validation pipe as Object, and nothing would be checked.
    @Body() body?: WebhookSecretRotationRequestDto,
  ): Promise<RotatedWebhookSecretDto> {
    return RotatedWebhookSecretDto.from(await this.rotateSecret.execute(id, account, body?.expiresInSeconds));
  }

  @Delete(':endpointId')
  @HttpCode(204)
  @ApiOperation({
    operationId: 'deleteWebhookEndpoint',
    summary: 'Delete a webhook endpoint (pending deliveries stop)',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @Conditional('webhook endpoint')
  async remove(
    @Param('endpointId', ParseIdPipe) id: number,
    @CurrentAccount() account: Account,
    @IfMatch(WebhookEndpointDto.from) precondition?: Precondition<WebhookEndpoint>,
  ): Promise<void> {
    await this.deleteEndpoint.execute(id, account, precondition);
  }

  @ReadsFromReplica()
  @Get(':endpointId/deliveries')
  @ApiOperation({ operationId: 'listWebhookDeliveries', summary: "The endpoint's deliveries, newest first" })
  @ApiOkResponse({ type: [WebhookDeliveryDto], headers: ApiNextPageLink })
  @ConditionalPage()
  async deliveries(
    @Param('endpointId', ParseIdPipe) id: number,
    @Query() query: PageQueryDto,
    @CurrentAccount() account: Account,
  ): Promise<Paginated<WebhookDeliveryDto>> {
    const request = pageRequest(query);
    return Paginated.of(await this.queries.deliveries(id, account, request), request, WebhookDeliveryDto.from);
  }

  @Post(':endpointId/deliveries/:deliveryId/retry')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'retryWebhookDelivery',
    summary: 'Send a delivery again, or a pending one now',
    description:
      'For a receiver that was down, or lost what it received: a `delivered` or `failed` delivery becomes ' +
      '`pending` and its next attempt is queued at once, with the same body and `webhook-id` (receivers that ' +
      'keep ids see a duplicate); a `pending` one waiting for its back-off is sent at once instead of at ' +
      '`nextAttemptAt`. Should that attempt fail, the delivery continues its retry schedule where it stopped, its ' +
      'next back-off counted from that attempt; after the ninth attempt none is left and it is `failed` again. A ' +
      'delivery whose attempt is due already (queued, or under way) answers 409 `delivery_pending`: of two ' +
      'retries at once, one is accepted. `GET /webhooks/endpoints/{endpointId}/deliveries` ' +
      'lists the ids; events older than the retention period are gone with their deliveries. After an outage, ' +
      '`POST /webhooks/endpoints/{endpointId}/recover` sends every failed delivery since a time in one call. ' +
      `Redeliveries share the pings' budget: ${WEBHOOK_OUTBOUND_PER_MINUTE} pings, redeliveries and recoveries a ` +
      'minute per account (shared by every instance), on top of the general rate limit; past it, 429 ' +
      '`rate_limited` with `Retry-After`. A redelivery refused (`delivery_pending`, `not_found`) spends none of it. ' +
      'A deployment that sends no webhooks (`WEBHOOKS_DELIVERY=off`) answers 409 `webhook_delivery_off` and leaves ' +
      'the delivery as it was.',
  })
  @ApiAcceptedResponse({ type: WebhookDeliveryDto, description: 'Queued: the delivery, `pending` again.' })
  @ApiErrors({
    404: 'No such endpoint of yours, or no such delivery of that endpoint (`not_found`).',
    409:
      'The delivery is being sent already: its attempt is queued or under way (`delivery_pending`, which spends ' +
      'nothing of the budget); or this deployment sends no webhooks (a restored copy: `webhook_delivery_off`), and ' +
      'the delivery is left as it was.',
  })
  async retry(
    @Param('endpointId', ParseIdPipe) id: number,
    @Param('deliveryId', ParseIdPipe) deliveryId: number,
    @CurrentAccount() account: Account,
    @Req() request: FastifyRequest,
  ): Promise<WebhookDeliveryDto> {
    const admit = () => chargeWebhookOutbound(request);
    return WebhookDeliveryDto.from(await this.retryDelivery.execute(id, deliveryId, account, admit));
  }

  @Post(':endpointId/recover')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'recoverWebhookDeliveries',
    summary: 'Send again every failed delivery since a time (after an outage)',
    description:
      'For a receiver that was down: one call instead of a retry per delivery. The deliveries created at or after ' +
      '`since` whose last attempt failed (`failed` ones, and `pending` ones waiting for their back-off) become ' +
      '`pending`, due now, and their attempts are queued at once, with the same body and `webhook-id` (receivers ' +
      'that keep ids see a duplicate of what they had); with `all: true`, the `delivered` ones too. A delivery ' +
      'whose attempt is due already (queued, or under way) is left as it is, so a recovery never queues a ' +
      'delivery twice, and a second call at once queues nothing more. Pings are not sent again. Should an attempt ' +
      'fail, its delivery continues its retry schedule as after a redelivery. The answer says how many were ' +
      `queued. At most ${RECOVERY_LIMIT} deliveries a call, oldest first: when more are left, ` +
      '`nextSince` is the `since` of the next call. `since` may be at most the retention period of the events ago ' +
      '(EVENT_RETENTION_DAYS, 30 days by default): older events are gone with their deliveries. A call counts as ' +
      `one against the pings' and redeliveries' budget (${WEBHOOK_OUTBOUND_PER_MINUTE} a minute per account, ` +
      'shared by every instance), however many deliveries it queues; a refused call (400, 404, 409) spends ' +
      'nothing. A disabled endpoint fails what is queued again at once (`endpoint_disabled`): enable it first ' +
      '(`PATCH` with `enabled: true`). A deployment that sends no webhooks (`WEBHOOKS_DELIVERY=off`) answers 409 ' +
      '`webhook_delivery_off` and changes nothing.',
  })
  @ApiAcceptedResponse({ type: WebhookRecoveryDto, description: 'Queued: how many deliveries.' })
  @ApiErrors({
    400: '`since` is not a date-time, or older than the retention period of the events (`validation_failed`).',
    404: 'No such endpoint of yours (`not_found`).',
    409: 'This deployment sends no webhooks (a restored copy): nothing is queued nor changed (`webhook_delivery_off`).',
  })
  async recover(
    @Param('endpointId', ParseIdPipe) id: number,
    @Body() body: WebhookRecoveryRequestDto,
    @CurrentAccount() account: Account,
    @Req() request: FastifyRequest,
  ): Promise<WebhookRecoveryDto> {
    const admit = () => chargeWebhookOutbound(request);
    return WebhookRecoveryDto.from(await this.recoverDeliveries.execute(id, body.toRequest(), account, admit));
  }

  @Post(':endpointId/test')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'testWebhookEndpoint',
    summary: 'Send a `ping` event to the endpoint',
    description:
      'One attempt, never retried; its outcome shows in the deliveries (`lastError` is a category). Pings have a ' +
      `budget of their own, shared with redeliveries and recoveries: ${WEBHOOK_OUTBOUND_PER_MINUTE} a minute per ` +
      'account (shared ' +
      'by every instance), on top of the general rate limit; past it, 429 `rate_limited` with `Retry-After`. A ' +
      'deployment that sends no webhooks (`WEBHOOKS_DELIVERY=off`, a restored copy of the database) answers 409 ' +
      '`webhook_delivery_off` and queues nothing.',
  })
  @ApiAcceptedResponse({ type: WebhookPingDto })
  @ApiErrors({
    404: 'No such endpoint of yours (`not_found`).',
    409:
      'This deployment sends no webhooks (a restored copy of the database): nothing is queued ' +
      '(`webhook_delivery_off`).',
  })
  async test(
    @Param('endpointId', ParseIdPipe) id: number,
    @CurrentAccount() account: Account,
  ): Promise<WebhookPingDto> {
    return { eventId: await this.pingEndpoint.execute(id, account), type: 'ping' };
  }
}
