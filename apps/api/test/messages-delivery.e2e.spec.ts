import {
  Clock,
  DeliverMessage,
  EventConsumers,
  DeliveryFailedError,
  GiveUpMessage,
  MessageDeliverySettings,
  MessageTransport,
  OutboxEventRecorder,
  QueueMessage,
  SubscriberCache,
  SubscriberCacheSettings,
  WebhookFanOut,
  WebhookSettings,
} from '@petstore/application';
import { Message } from '@petstore/domain';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import {
  createDataSource,
  DatabasePool,
  MESSAGE_DELIVERY_QUEUE,
  MessageDeliveryWorker,
  messageQueues,
  PgBossJobQueue,
  PgBossMessageQueue,
  PgKeyRevocations,
  TransactionHost,
  PgWebhookEndpointRepository,
  PgBossWebhookFanOutQueue,
  PgEventOutbox,
  PgMessageRepository,
  PgUnitOfWork,
  webhookQueues,
} from '@petstore/infrastructure';
import { ApiEventPayloads } from '../src/events/event-payloads';
import { DataSource } from 'typeorm';
import { eventually } from './support/eventually';

// Deliveries wait for pg-boss's polling (0.5 s) and retries for its back-off (1–2 s, then 2–4 s).
jest.setTimeout(30_000);

class TestClock extends Clock {
  constructor(public at: Date) {
    super();
  }
  now(): Date {
    return new Date(this.at);
  }
}

/** Counts the deliveries of each message; `hold` keeps a delivery waiting until released. */
class RecordingTransport extends MessageTransport {
  readonly calls = new Map<string, number>();
  failNext = new Set<string>();
  failAlways = new Set<string>();
  hold: Promise<void> | null = null;
  entered: () => void = () => undefined;

  async deliver(message: Message): Promise<void> {
    this.calls.set(message.id, (this.calls.get(message.id) ?? 0) + 1);
    this.entered();
    if (this.hold) await this.hold;
    if (this.failNext.delete(message.id) || this.failAlways.has(message.id)) throw new Error('transport refused');
  }
}

function latch(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

/** One worker as a separate process would have it: its own pool, job queue (pg-boss) and transport. */
class Worker {
  readonly transport = new RecordingTransport();
  readonly failures: DeliveryFailedError[] = [];
  jobs!: PgBossJobQueue;

  private constructor(readonly pool: DatabasePool) {}

  static async start(url: string, clock: Clock, settings: MessageDeliverySettings, supervise = true): Promise<Worker> {
    const worker = new Worker(new DatabasePool(url));
    worker.jobs = new PgBossJobQueue(worker.pool, { supervise, maintenanceIntervalSeconds: 1 });
    await worker.jobs.start([...messageQueues(settings), ...webhookQueues(new WebhookSettings())]);
    const host = new TransactionHost(worker.pool);
    const messages = new PgMessageRepository(host);
    // A delivery records its event (message.delivered) in the outbox, on the same transaction; webhooks consume it.
    const consumers = new EventConsumers();
    const events = new OutboxEventRecorder(new PgEventOutbox(host), new ApiEventPayloads(), clock, consumers);
    const endpoints = new PgWebhookEndpointRepository(host);
    // Not listening for endpoint changes: the subscriber cache asks the database every time.
    const changes = new PgKeyRevocations(host, { url }).endpointChanges;
    const subscribers = new SubscriberCache(endpoints, changes, clock, new SubscriberCacheSettings());
    consumers.register(new WebhookFanOut(subscribers, new PgBossWebhookFanOutQueue(host, worker.jobs), events));
    const uow = new PgUnitOfWork(host);
    const deliver = new DeliverMessage(messages, worker.transport, clock, settings, uow, events);
    const options = {
      batchSize: 5,
      pollingIntervalSeconds: 0.5,
      onFailure: (e: DeliveryFailedError) => worker.failures.push(e),
    };
    const silent = { log: () => undefined, warn: () => undefined } as never;
    await new MessageDeliveryWorker(worker.jobs, deliver, new GiveUpMessage(messages), options, silent).start();
    return worker;
  }

  async stop(): Promise<void> {
    await this.jobs.stop(2_000);
    await this.pool.close();
  }
}

describe('message delivery on the pg-boss job queue (real database)', () => {
  let url: string;
  let dataSource: DataSource;
  let pool: DatabasePool;
  let host: TransactionHost;
  let messages: PgMessageRepository;
  let jobs: PgBossJobQueue;
  let queueMessage: QueueMessage;
  let clock: TestClock;
  let ownerId: number;
  const settings = new MessageDeliverySettings(3, 5_000);
  const workers: Worker[] = [];

  const startWorker = async (workerSettings = settings) => {
    const worker = await Worker.start(url, clock, workerSettings);
    workers.push(worker);
    return worker;
  };

  beforeAll(async () => {
    url = await testDatabaseUrl();
    dataSource = await createDataSource(url).initialize();
    pool = new DatabasePool(url);
    host = new TransactionHost(pool);
    messages = new PgMessageRepository(host);
    // The sending side (an API instance without a worker): creates the schema and the queues.
    jobs = new PgBossJobQueue(pool, { supervise: false });
    await jobs.start([...messageQueues(settings), ...webhookQueues(new WebhookSettings())]);
    clock = new TestClock(new Date('2030-06-15T12:00:00.000Z'));
    queueMessage = new QueueMessage(new PgUnitOfWork(host), messages, new PgBossMessageQueue(jobs, host), clock);
  });

  beforeEach(async () => {
    await resetDatabase(dataSource);
    // Back to 3 attempts (a test's worker may have changed it).
    await jobs.start([...messageQueues(settings), ...webhookQueues(new WebhookSettings())]);
    const rows: Array<{ id: string }> = await dataSource.query(
      `INSERT INTO accounts (name, role) VALUES ('Sender', 'customer') RETURNING id`,
    );
    ownerId = Number(rows[0].id);
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((worker) => worker.stop()));
  });

  afterAll(async () => {
    await jobs.stop(1_000);
    await pool.close();
    await dataSource.destroy();
  });

  async function queue(count: number, prefix = 'message'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await queueMessage.execute({ text: `${prefix} ${i}`, ownerId })).id);
    return ids;
  }

  const row = async (id: string) =>
    (
      await dataSource.query(
        `SELECT status, attempts, delivered_at AS "deliveredAt", last_error AS "lastError" FROM messages WHERE id = $1`,
        [id],
      )
    )[0];
  const jobCount = async (id?: string) =>
    Number(
      (
        await dataSource.query(
          `SELECT count(*)::int AS n FROM pgboss.job WHERE name = $1 AND ($2::uuid IS NULL OR id = $2)`,
          [MESSAGE_DELIVERY_QUEUE, id ?? null],
        )
      )[0].n,
    );
  const statusOf = async (id: string) => (await row(id)).status as string;

  it('stores a queued message with its job, and reads it back through the repository', async () => {
    const [id] = await queue(1, 'stored');
    const read = await messages.findById(id);
    expect(read?.toSnapshot()).toEqual({
      id,
      text: 'stored 0',
      status: 'queued',
      createdAt: clock.now(),
      deliveredAt: null,
      ownerId,
      version: 1,
    });
    expect(await row(id)).toEqual({ status: 'queued', attempts: 0, deliveredAt: null, lastError: null });
    expect(await jobCount(id)).toBe(1);
  });

  it("queues the job in the message's transaction: a rollback leaves neither, a commit both", async () => {
    const uow = new PgUnitOfWork(host);
    let rolledBack = '';
    await expect(
      uow.run(async () => {
        rolledBack = (await queueMessage.execute({ text: 'never', ownerId })).id;
        throw new Error('the request failed later');
      }),
    ).rejects.toThrow('the request failed later');
    expect(await messages.findById(rolledBack)).toBeNull();
    expect(await jobCount()).toBe(0);
    await queue(1);
    expect(await jobCount()).toBe(1);
  });

  it('refuses to queue a job outside a transaction (it could outlive a rolled-back message)', async () => {
    await expect(new PgBossMessageQueue(jobs, host).enqueue('3f2b8c1e-9d4a-4b7e-8c2d-1a2b3c4d5e6f')).rejects.toThrow(
      /A job for "message-delivery" needs a transaction \(UnitOfWork\.run\)/,
    );
  });

  it('delivers queued messages and records when, with the attempts made', async () => {
    const ids = await queue(3);
    const worker = await startWorker();
    await eventually(async () => (await Promise.all(ids.map(statusOf))).every((s) => s === 'delivered'));
    for (const id of ids) {
      expect(await row(id)).toEqual({ status: 'delivered', attempts: 1, deliveredAt: clock.now(), lastError: null });
      expect(worker.transport.calls.get(id)).toBe(1);
    }
  });

  it('holds no row lock and no transaction while the transport delivers', async () => {
    const [id] = await queue(1);
    const worker = await startWorker();
    const held = latch();
    const inside = latch();
    worker.transport.hold = held.promise;
    worker.transport.entered = inside.release;
    await inside.promise;
    const open: Array<{ n: number }> = await dataSource.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state LIKE 'idle in transaction%' AND pid <> pg_backend_pid()`,
    );
    expect(open[0].n).toBe(0);
    // Another transaction may lock the message and its job at once (NOWAIT fails if anyone holds them).
    await host.transaction(async () => {
      await host.query(`SELECT 1 FROM messages WHERE id = $1 FOR UPDATE NOWAIT`, [id]);
      await host.query(`SELECT 1 FROM pgboss.job WHERE name = $1 AND id = $2 FOR UPDATE NOWAIT`, [
        MESSAGE_DELIVERY_QUEUE,
        id,
      ]);
    });
    held.release();
    await eventually(async () => (await statusOf(id)) === 'delivered');
  });

  it('retries a failed delivery with back-off, recording the error, then delivers it', async () => {
    const [failing, fine] = await queue(2);
    const worker = await startWorker();
    worker.transport.failNext.add(failing);
    await eventually(async () => (await statusOf(fine)) === 'delivered');
    await eventually(async () => (await row(failing)).attempts === 1);
    expect(await row(failing)).toEqual({
      status: 'queued',
      attempts: 1,
      deliveredAt: null,
      lastError: 'Error: transport refused',
    });
    await eventually(async () => (await statusOf(failing)) === 'delivered');
    expect(await row(failing)).toEqual(expect.objectContaining({ attempts: 2, lastError: null }));
    expect(worker.transport.calls.get(failing)).toBe(2);
    expect(worker.transport.calls.get(fine)).toBe(1);
    expect(worker.failures.map((f) => [f.attempt, f.givenUp])).toEqual([[1, false]]);
  });

  it('gives a message up as failed after MESSAGE_MAX_ATTEMPTS attempts, and tries no more', async () => {
    // A job takes the attempts the queue allows when it is sent: the worker's start set them to 2.
    const worker = await startWorker(new MessageDeliverySettings(2, 5_000));
    const [id] = await queue(1);
    worker.transport.failAlways.add(id);
    await eventually(async () => (await statusOf(id)) === 'failed');
    expect(await row(id)).toEqual({
      status: 'failed',
      attempts: 2,
      deliveredAt: null,
      lastError: 'Error: transport refused',
    });
    expect(worker.failures.map((f) => [f.attempt, f.givenUp])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(worker.transport.calls.get(id)).toBe(2);
  });

  it('counts a delivery that hangs past the timeout as a failed attempt', async () => {
    const [id] = await queue(1);
    const worker = await startWorker(new MessageDeliverySettings(3, 50));
    const stuck = latch();
    worker.transport.hold = stuck.promise;
    await eventually(async () => (await row(id)).attempts === 1);
    expect(await row(id)).toEqual(
      expect.objectContaining({ status: 'queued', lastError: 'Error: delivery timed out after 50 ms' }),
    );
    stuck.release();
  });

  it('four racing workers deliver each of 120 messages exactly once', async () => {
    const ids = await queue(120);
    const racing = await Promise.all(Array.from({ length: 4 }, () => startWorker()));
    await eventually(
      async () => {
        const [{ n }] = await dataSource.query(`SELECT count(*)::int AS n FROM messages WHERE status = 'delivered'`);
        return n === 120;
      },
      Boolean,
      30_000,
    );
    for (const id of ids) {
      expect(racing.reduce((sum, worker) => sum + (worker.transport.calls.get(id) ?? 0), 0)).toBe(1);
    }
    expect(racing.filter((worker) => worker.transport.calls.size > 0).length).toBeGreaterThan(1);
  });

  it('at least once: a message whose worker died mid-delivery is delivered by another after its lease', async () => {
    const [id] = await queue(1);
    // The "dead" worker took the job (it is active, leased) and will never report back.
    const taken = await jobs.boss.fetch(MESSAGE_DELIVERY_QUEUE, { batchSize: 1 });
    expect(taken.map((job) => job.id)).toEqual([id]);
    await dataSource.query(`UPDATE pgboss.job SET expire_in = interval '1 second' WHERE name = $1 AND id = $2`, [
      MESSAGE_DELIVERY_QUEUE,
      id,
    ]);
    const survivor = await startWorker();
    await eventually(async () => (await statusOf(id)) === 'delivered');
    expect(survivor.transport.calls.get(id)).toBe(1);
    expect((await row(id)).attempts).toBe(2);
  });

  it('gives up a message whose worker died during its last attempt (the dead letter marks it failed)', async () => {
    await jobs.start(messageQueues(new MessageDeliverySettings(1, 5_000))); // one attempt only
    const [id] = await queue(1);
    const taken = await jobs.boss.fetch(MESSAGE_DELIVERY_QUEUE, { batchSize: 1 });
    expect(taken.map((job) => job.id)).toEqual([id]);
    await dataSource.query(`UPDATE pgboss.job SET expire_in = interval '1 second' WHERE name = $1 AND id = $2`, [
      MESSAGE_DELIVERY_QUEUE,
      id,
    ]);
    const survivor = await startWorker(new MessageDeliverySettings(1, 5_000));
    await eventually(async () => (await statusOf(id)) === 'failed');
    expect(survivor.transport.calls.get(id)).toBeUndefined();
  });

  it('delivers a message queued before the job queue existed (an upgrade): the worker gives it a job', async () => {
    const legacy = Message.queue({
      id: messages.nextId(),
      text: 'from the previous release',
      ownerId,
      now: clock.now(),
    });
    await messages.add(legacy); // the row alone, as the hand-written poller's release stored it
    expect(await jobCount(legacy.id)).toBe(0);
    const worker = await startWorker();
    await eventually(async () => (await statusOf(legacy.id)) === 'delivered');
    expect(worker.transport.calls.get(legacy.id)).toBe(1);
  });

  it('lists oldest first by the internal sequence, filtered by status, page by page', async () => {
    const ids = await queue(5);
    for (const id of ids.slice(0, 2)) {
      const message = await messages.findById(id);
      message?.deliver(clock.now());
      if (message) await messages.recordAttempt(message, { attempts: 1, error: null });
    }
    const first = await messages.list({}, { limit: 3 });
    expect(first.items.map((m) => m.id)).toEqual(ids.slice(0, 3));
    expect(first.nextAfterId).toEqual(expect.any(Number));
    const second = await messages.list({}, { limit: 3, afterId: first.nextAfterId ?? undefined });
    expect(second.items.map((m) => m.id)).toEqual(ids.slice(3));
    expect(second.nextAfterId).toBeNull();
    expect((await messages.list({ status: 'delivered' }, { limit: 10 })).items.map((m) => m.id)).toEqual(
      ids.slice(0, 2),
    );
    expect((await messages.list({ status: 'queued' }, { limit: 10 })).items.map((m) => m.id)).toEqual(ids.slice(2));
  });

  it('reports the queue to the metrics: depth, oldest queued, failed', async () => {
    expect(await messages.queueStats()).toEqual({ queued: 0, oldestQueuedAt: null, failed: 0 });
    const [first] = await queue(3);
    const failed = await messages.findById(first);
    failed?.giveUp();
    if (failed) await messages.recordAttempt(failed, { attempts: 3, error: 'gone' });
    expect(await messages.queueStats()).toEqual({ queued: 2, oldestQueuedAt: clock.now(), failed: 1 });
  });
});
