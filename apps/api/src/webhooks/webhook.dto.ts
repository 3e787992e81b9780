import { ApiProperty, ApiPropertyOptional, ApiPropertyOptions, ApiSchema } from '@nestjs/swagger';
import {
  RecoverWebhookDeliveries,
  RecoveryAsked,
  RotatedWebhookSecret,
  WEBHOOK_DELIVERY_STATUSES,
  WebhookDelivery,
  WebhookRecovery,
  WebhookRotationSettings,
  WebhookSettings,
} from '@petstore/application';
import { eventTypesWhere, WEBHOOK_EVENT_TYPES, WebhookEndpoint, WebhookEventType, LIMITS } from '@petstore/domain';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { eventTypeProse } from '../events/event-type-prose';
import { IsDateTime } from '../common/validation/date-time';
import { IsOmittable } from '../common/validation/optional';
import { OptionalBody } from '../common/validation/validation.pipe';

/** The most deliveries one recovery queues, as the description writes it (`1,000`). */
const RECOVERY_LIMIT = RecoverWebhookDeliveries.LIMIT.toLocaleString('en');

const DISABLE_AFTER_DAYS = WebhookSettings.DEFAULT_DISABLE_AFTER_MS / (24 * 3600 * 1000);

const URL_PROPERTY = {
  description:
    'Where events are POSTed: an https:// URL whose host resolves to public addresses only (checked now and again ' +
    'at every connection). A private, loopback or link-local address is refused (400 `invalid_webhook_url`).',
  maxLength: LIMITS.webhookUrl.max,
  example: 'https://example.com/hooks/petstore',
};

const EVENTS_PROPERTY: ApiPropertyOptions & { description: string } = {
  description:
    `The events to receive (at least one). ${eventTypeProse(eventTypesWhere({ audience: 'administrators' }))} is ` +
    'for administrators; a customer receives the events of its own orders and messages, an administrator those ' +
    `of every order; everyone the catalogue's (${eventTypeProse(eventTypesWhere({ audience: 'everyone' }))}).`,
  type: 'array',
  items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  example: WEBHOOK_EVENT_TYPES.slice(0, 2),
};

@ApiSchema({ name: 'NewWebhookEndpoint', description: 'Input of `POST /webhooks/endpoints`.' })
export class NewWebhookEndpointDto {
  @ApiProperty(URL_PROPERTY)
  @IsString()
  @MaxLength(LIMITS.webhookUrl.max)
  url: string;

  @ApiProperty(EVENTS_PROPERTY)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true })
  events: WebhookEventType[];
}

@ApiSchema({
  name: 'WebhookEndpointUpdate',
  description: 'Input of `PATCH /webhooks/endpoints/{id}`: the fields to change; what is left out stays as it is.',
})
export class WebhookEndpointUpdateDto {
  @ApiPropertyOptional({
    ...URL_PROPERTY,
    description: `${URL_PROPERTY.description} A new URL starts with a clean record (no failing streak).`,
  })
  @IsOmittable()
  @IsString()
  @MaxLength(LIMITS.webhookUrl.max)
  url?: string;

  @ApiPropertyOptional({ ...EVENTS_PROPERTY, description: `${EVENTS_PROPERTY.description} Replaces the list.` })
  @IsOmittable()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true })
  events?: WebhookEventType[];

  @ApiPropertyOptional({
    description:
      '`true` enables a disabled endpoint again (`disabledAt` goes; its failing streak starts afresh, so the next ' +
      'check does not disable it at once); `false` disables it: it receives nothing until enabled again. Events ' +
      'that happened while it was disabled are not sent.',
    example: true,
  })
  @IsOmittable()
  @IsBoolean()
  enabled?: boolean;
}

const MAX_ROTATION_WINDOW_SECONDS = 604_800;

@OptionalBody()
@ApiSchema({
  name: 'WebhookSecretRotationRequest',
  description: 'Input of `POST /webhooks/endpoints/{id}/secret/rotate` (optional: no body keeps the default window).',
})
export class WebhookSecretRotationRequestDto {
  @ApiPropertyOptional({
    description:
      "How long the current secret still signs deliveries beside the new one, in seconds: at most the service's " +
      `window (WEBHOOK_SECRET_ROTATION_WINDOW_SECONDS, ${WebhookRotationSettings.DEFAULT_WINDOW_SECONDS} by ` +
      'default), which is also what leaving it out gives; 0 stops it at once.',
    type: 'integer',
    minimum: 0,
    maximum: MAX_ROTATION_WINDOW_SECONDS,
    example: 3600,
  })
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(MAX_ROTATION_WINDOW_SECONDS)
  expiresInSeconds?: number;
}

@ApiSchema({ name: 'WebhookSecretRotation', description: 'The new signing secret, and until when the old one signs.' })
export class RotatedWebhookSecretDto {
  @ApiProperty({
    description:
      'The new signing secret (`whsec_` + base64 of 32 random bytes), shown in this response only: keep it. ' +
      'Every delivery is signed with it from now on.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;

  @ApiProperty({
    description:
      'Until then every delivery carries two signatures, `webhook-signature: v1,<new> v1,<old>`, so a receiver ' +
      'still checking with the old secret accepts it; afterwards only the new one. Rotating again before then ' +
      'replaces the old secret: the one before it stops signing at once.',
    format: 'date-time',
  })
  expiresAt: string;

  static from(rotated: RotatedWebhookSecret): RotatedWebhookSecretDto {
    return Object.assign(new RotatedWebhookSecretDto(), {
      secret: rotated.endpoint.secret,
      expiresAt: rotated.previousSecretExpiresAt.toISOString(),
    });
  }
}

@ApiSchema({ name: 'WebhookEndpoint', description: 'A URL that receives the events its owner subscribed to.' })
export class WebhookEndpointDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1 })
  id: number;

  @ApiProperty({ example: 'https://example.com/hooks/petstore' })
  url: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
    example: WEBHOOK_EVENT_TYPES.slice(0, 1),
  })
  events: WebhookEventType[];

  @ApiProperty({ description: 'When it was created (ISO 8601, UTC).', format: 'date-time' })
  createdAt: string;

  @ApiPropertyOptional({
    description:
      `Present once the endpoint is disabled: every delivery to it failed for ${DISABLE_AFTER_DAYS} days, or its ` +
      'owner disabled it. It receives nothing more until enabled again (`PATCH` with `enabled: true`).',
    format: 'date-time',
  })
  disabledAt?: string;

  static from(endpoint: WebhookEndpoint): WebhookEndpointDto {
    const dto = Object.assign(new WebhookEndpointDto(), {
      id: endpoint.id,
      url: endpoint.url,
      events: [...endpoint.events],
      createdAt: endpoint.createdAt.toISOString(),
    });
    if (endpoint.disabledAt) dto.disabledAt = endpoint.disabledAt.toISOString();
    return dto;
  }
}

@ApiSchema({ name: 'NewWebhookEndpointWithSecret', description: 'The endpoint just created, with its signing secret.' })
export class CreatedWebhookEndpointDto extends WebhookEndpointDto {
  @ApiProperty({
    description:
      'The signing secret (`whsec_` + base64 of 32 random bytes), shown in this response only: keep it. ' +
      '`new Webhook(secret).verify(body, headers)` of the `standardwebhooks` package checks a delivery with it.',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;

  static withSecret(endpoint: WebhookEndpoint): CreatedWebhookEndpointDto {
    return Object.assign(new CreatedWebhookEndpointDto(), WebhookEndpointDto.from(endpoint), {
      secret: endpoint.secret,
    });
  }
}

const DELIVERY_STATUSES = WEBHOOK_DELIVERY_STATUSES;

@ApiSchema({ name: 'WebhookDelivery', description: 'One event sent (or being sent) to one endpoint.' })
export class WebhookDeliveryDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1 })
  id: number;

  @ApiProperty({ description: "The event's id: the `webhook-id` header, the same on every attempt.", format: 'uuid' })
  eventId: string;

  @ApiProperty({ enum: [...WEBHOOK_EVENT_TYPES, 'ping'], example: WEBHOOK_EVENT_TYPES[0] })
  type: string;

  @ApiProperty({
    enum: DELIVERY_STATUSES,
    description:
      '`pending`: not delivered yet (more attempts are due); `delivered`: a 2xx came back; ' +
      '`failed`: every attempt failed.',
  })
  status: (typeof DELIVERY_STATUSES)[number];

  @ApiProperty({ description: 'Attempts made so far.', type: 'integer', example: 1 })
  attempts: number;

  @ApiPropertyOptional({
    description: 'The HTTP status of the last attempt, when one came back.',
    type: 'integer',
    example: 200,
  })
  lastStatusCode?: number;

  @ApiPropertyOptional({
    description:
      'Why the last attempt failed, as a category (no host, address or network library text): `timeout` (no ' +
      'answer in time), `connection_refused`, `connection_error` (reset, unreachable, other network failures), ' +
      '`tls_error` (handshake or certificate), `http_status` (an answer outside 2xx: see `lastStatusCode`), ' +
      '`forbidden_address` (the host does not resolve, or resolves to a private, loopback, link-local or ' +
      'otherwise forbidden address: the two are not told apart), `invalid_url` (the URL no longer passes the ' +
      'rules: scheme, credentials, port), `endpoint_disabled`, `given_up` (the delivery job kept breaking). ' +
      'Deliveries recorded before this list may carry older free text.',
    example: 'http_status',
  })
  lastError?: string;

  @ApiPropertyOptional({ description: 'When the next attempt is due (pending deliveries).', format: 'date-time' })
  nextAttemptAt?: string;

  @ApiProperty({ format: 'date-time' })
  createdAt: string;

  @ApiPropertyOptional({ format: 'date-time' })
  deliveredAt?: string;

  static from(delivery: WebhookDelivery): WebhookDeliveryDto {
    const dto = Object.assign(new WebhookDeliveryDto(), {
      id: delivery.id,
      eventId: delivery.eventId,
      type: delivery.type,
      status: delivery.status,
      attempts: delivery.attempts,
      createdAt: delivery.createdAt.toISOString(),
    });
    if (delivery.lastStatusCode !== null) dto.lastStatusCode = delivery.lastStatusCode;
    if (delivery.lastError !== null) dto.lastError = delivery.lastError;
    if (delivery.status === 'pending' && delivery.nextAttemptAt)
      dto.nextAttemptAt = delivery.nextAttemptAt.toISOString();
    if (delivery.deliveredAt) dto.deliveredAt = delivery.deliveredAt.toISOString();
    return dto;
  }
}

@ApiSchema({ name: 'WebhookPing', description: 'The ping event queued for the endpoint.' })
export class WebhookPingDto {
  @ApiProperty({
    description: "The event's id (`webhook-id`); its delivery shows in the endpoint's deliveries.",
    format: 'uuid',
  })
  eventId: string;

  @ApiProperty({ enum: ['ping'] })
  type: 'ping';
}

@ApiSchema({
  name: 'WebhookRecoveryRequest',
  description: 'Input of `POST /webhooks/endpoints/{id}/recover`: from when, and whether delivered deliveries too.',
})
export class WebhookRecoveryRequestDto {
  @ApiProperty({
    description:
      'The deliveries created at or after this time (inclusive; ISO 8601 with a time zone): the start of the ' +
      "receiver's outage, say. At most the events' retention period ago (EVENT_RETENTION_DAYS, 30 days by " +
      'default): older events are deleted with their deliveries (400 `validation_failed` naming `since`).',
    format: 'date-time',
    example: '2026-11-21T10:00:00Z',
  })
  @IsDateTime()
  since: string;

  @ApiPropertyOptional({
    description:
      '`true`: the delivered deliveries too (a receiver that lost what it had received), not only those whose ' +
      'last attempt failed. `false` by default.',
    default: false,
    example: false,
  })
  @IsOmittable()
  @IsBoolean()
  all?: boolean;

  toRequest(): RecoveryAsked {
    return { since: new Date(this.since), all: this.all ?? false };
  }
}

@ApiSchema({ name: 'WebhookRecovery', description: 'What a recovery queued.' })
export class WebhookRecoveryDto {
  @ApiProperty({
    description:
      `Deliveries queued now (at most ${RECOVERY_LIMIT} a call): each is \`pending\` again, its ` +
      'next attempt due at once, with the same body and `webhook-id`.',
    type: 'integer',
    example: 246,
  })
  queued: number;

  @ApiPropertyOptional({
    description:
      `Only when more was left than one call takes (${RECOVERY_LIMIT}): ` +
      'call again with this as `since` (and the same `all`) for the rest; absent, every delivery since `since` was ' +
      'looked at.',
    format: 'date-time',
  })
  nextSince?: string;

  static from(recovery: WebhookRecovery): WebhookRecoveryDto {
    const dto = Object.assign(new WebhookRecoveryDto(), { queued: recovery.queued });
    if (recovery.nextSince) dto.nextSince = recovery.nextSince.toISOString();
    return dto;
  }
}
