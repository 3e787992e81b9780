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

/** The URL is not one events may be sent to (scheme, or an address inside the network). */
export class WebhookUrlRefusedError extends DomainError {
  readonly kind = 'invalid_webhook_url' as const;
  constructor(reason: string) {
    super(`url refused: ${reason}`);
  }
}
