import { LIMITS } from '../common/limits';
import { DomainError, NotFoundError } from '../common/domain-error';

export class WebhookEndpointNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Webhook endpoint', id);
  }
}

export class TooManyWebhookEndpointsError extends DomainError {
  readonly kind = 'too_many_endpoints' as const;
  constructor() {
    super(`An account may have at most ${LIMITS.webhookEndpoints.max} webhook endpoints; delete one first.`);
  }
}

/**
 * The account has an endpoint on this URL already (issue 48, item 8): a second one would only make the service send
 * each event to that URL once more, so it is refused rather than deduplicated at every delivery.
 */
export class WebhookUrlTakenError extends DomainError {
  readonly kind = 'webhook_url_taken' as const;
  constructor(existingId: number) {
    super(
      `This account has a webhook endpoint on this URL already (${existingId}): subscribe it to more events instead ` +
        '(PATCH its events).',
    );
  }
}

/** The URL is not one events may be sent to (scheme, or an address inside the network). */
export class WebhookUrlRefusedError extends DomainError {
  readonly kind = 'invalid_webhook_url' as const;
  constructor(reason: string) {
    super(`url refused: ${reason}`);
  }
}
