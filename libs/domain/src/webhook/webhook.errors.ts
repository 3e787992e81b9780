import { DomainError, NotFoundError } from '../shared/domain-error';
import { MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT } from './webhook';

export class WebhookEndpointNotFoundError extends NotFoundError {
  constructor(id: number) {
    super('Webhook endpoint', id);
  }
}

export class TooManyWebhookEndpointsError extends DomainError {
  readonly code = 'too_many_endpoints';
  readonly kind = 'conflict' as const;
  constructor() {
    super(`An account may have at most ${MAX_WEBHOOK_ENDPOINTS_PER_ACCOUNT} webhook endpoints; delete one first.`);
  }
}

/** The URL is not one events may be sent to (scheme, or an address inside the network). */
export class WebhookUrlRefusedError extends DomainError {
  readonly code = 'invalid_webhook_url';
  readonly kind = 'invalid' as const;
  constructor(reason: string) {
    super(`url refused: ${reason}`);
  }
}
