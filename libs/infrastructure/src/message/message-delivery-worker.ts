import { Logger } from '@nestjs/common';
import { DeliverMessage, DeliveryFailedError, GiveUpMessage } from '@petstore/application';
import { PgBossJobQueue } from '../jobs/pg-boss-job-queue';
import { MESSAGE_DELIVERY_QUEUE, MESSAGE_GIVE_UP_QUEUE, MessageJob } from './pg-boss-message-queue';

/** Queued messages without a delivery job: `$1` the delivery queue, `$2` the seq to continue after (a page of 500). */
const QUEUED_WITHOUT_JOB = `SELECT m.id, m.seq::text AS seq FROM messages m
  WHERE m.status = 'queued' AND m.seq > $2::bigint
    AND NOT EXISTS (SELECT 1 FROM pgboss.job j WHERE j.name = $1 AND j.id = m.id)
  ORDER BY m.seq LIMIT 500`;

export interface MessageWorkerOptions {
  /** Jobs taken per fetch, delivered concurrently. */
  batchSize: number;
  /** Pause between two fetches that found nothing (pg-boss's minimum: 0.5 s). */
  pollingIntervalSeconds: number;
  /** Called for each failed attempt (metrics). */
  onFailure?: (error: DeliveryFailedError) => void;
}

export const DEFAULT_MESSAGE_WORKER_OPTIONS: MessageWorkerOptions = { batchSize: 20, pollingIntervalSeconds: 0.5 };

/**
 * The message workers of this process, on the job queue: one delivers (DeliverMessage per job; a
 * failure makes pg-boss retry with back-off), one gives up (GiveUpMessage for each dead letter).
 * Any number of processes may run them on one database: pg-boss hands each job to one of them.
 */
export class MessageDeliveryWorker {
  constructor(
    private readonly jobs: PgBossJobQueue,
    private readonly deliver: DeliverMessage,
    private readonly giveUp: GiveUpMessage,
    private readonly options: MessageWorkerOptions = DEFAULT_MESSAGE_WORKER_OPTIONS,
    private readonly logger = new Logger('MessageWorker'),
  ) {}

  async start(): Promise<void> {
    const requeued = await this.enqueueOrphans();
    if (requeued)
      this.logger.log(`${requeued} queued messages had no delivery job (queued before the job queue): queued now`);
    const { batchSize, pollingIntervalSeconds } = this.options;
    await this.jobs.work<MessageJob>(MESSAGE_DELIVERY_QUEUE, { batchSize, pollingIntervalSeconds }, async (job) => {
      try {
        await this.deliver.execute({
          messageId: job.data.messageId,
          attempt: job.retryCount + 1,
          isLast: job.retryCount >= job.retryLimit,
        });
      } catch (error) {
        if (error instanceof DeliveryFailedError) {
          this.options.onFailure?.(error);
          this.logger.warn(error.message);
        }
        throw error;
      }
    });
    await this.jobs.work<MessageJob>(MESSAGE_GIVE_UP_QUEUE, { batchSize, pollingIntervalSeconds: 2 }, async (job) => {
      if (await this.giveUp.execute(job.data.messageId)) {
        this.logger.warn(`Message ${job.data.messageId} given up: no delivery attempt left`);
      }
    });
  }

  /**
   * Gives a job to every queued message that has none: those queued by the release before the job
   * queue, during an upgrade. A message and its job commit together, so a message seen without its
   * job has none. Keyset on `seq`, so each message is looked at once.
   */
  private async enqueueOrphans(): Promise<number> {
    const db = this.jobs.boss.getDb();
    let total = 0;
    let afterSeq = '0';
    for (;;) {
      const { rows } = await db.executeSql(QUEUED_WITHOUT_JOB, [MESSAGE_DELIVERY_QUEUE, afterSeq]);
      if (rows.length === 0) return total;
      const ids = (rows as Array<{ id: string; seq: string }>).map((row) => row.id);
      await this.jobs.boss.insert(ids.map((id) => ({ name: MESSAGE_DELIVERY_QUEUE, id, data: { messageId: id } })));
      total += rows.length;
      afterSeq = (rows[rows.length - 1] as { seq: string }).seq;
    }
  }
}
