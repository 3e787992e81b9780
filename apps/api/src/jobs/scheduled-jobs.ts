import type { Type } from '@nestjs/common';
import { DisableFailingWebhookEndpoints, ExpireHeldOrders, PurgeExpiredIdempotencyKeys } from '@petstore/application';

export interface ScheduledJob {
  /** The job queue's name for it (letters, digits, hyphens). */
  name: string;
  /** When, as a cron expression in UTC (minute granularity). */
  cron: string;
  /** The use case run: an @Injectable whose dependencies are global ports, with `execute()`. */
  useCase: Type<{ execute(): Promise<unknown> }>;
}

/**
 * Use cases the job queue runs on a schedule, once across all instances, in whichever process
 * runs a worker (MESSAGE_WORKER or --worker-only). Adding one is one line here (kept in name order).
 */
export const SCHEDULED_JOBS: ScheduledJob[] = [
  { name: 'disable-failing-webhook-endpoints', cron: '17 * * * *', useCase: DisableFailingWebhookEndpoints },
  { name: 'expire-held-orders', cron: '* * * * *', useCase: ExpireHeldOrders },
  { name: 'purge-expired-idempotency-keys', cron: '*/10 * * * *', useCase: PurgeExpiredIdempotencyKeys },
];
