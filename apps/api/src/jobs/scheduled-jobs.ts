import type { Type } from '@nestjs/common';
import type { QueueDefinition } from '@petstore/infrastructure';

export interface ScheduledJob {
  /** The job queue's name for it (letters, digits, hyphens). */
  name: string;
  /** When, as a cron expression in UTC (minute granularity). */
  cron: string;
  /** The use case run: an @Injectable provided by its slice's module, with `execute()`. */
  useCase: Type<{ execute(): Promise<unknown> }>;
}

/**
 * What a slice gives the job queue: the queues it sends to (created at start-up, in every process) and the
 * use cases it runs on a schedule, once across all instances, in whichever process has the `scheduler` role.
 * The assembly gathers them from the slices; the job queue knows no feature.
 */
export interface SliceJobs {
  queues?: QueueDefinition[];
  scheduled?: ScheduledJob[];
}
