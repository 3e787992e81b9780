import {
  Clock,
  DeliverDueMessages,
  MessageDeliverySettings,
  MessageTransport,
  RetryBackoff,
} from '@petstore/application';
import { Message } from '@petstore/domain';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import {
  createDataSource,
  TransactionHost,
  TypeOrmMessageQueue,
  TypeOrmMessageRepository,
  TypeOrmUnitOfWork,
} from '@petstore/infrastructure';
import { DataSource } from 'typeorm';

class TestClock extends Clock {
  constructor(public at: Date) {
    super();
  }
  now(): Date {
    return new Date(this.at);
  }
  advance(ms: number): void {
    this.at = new Date(this.at.getTime() + ms);
  }
}

/** Counts the deliveries of each message; `hold` keeps a delivery waiting until released. */
class RecordingTransport extends MessageTransport {
  readonly calls = new Map<string, number>();
  failNext = new Set<string>();
  hold: Promise<void> | null = null;
  entered: () => void = () => undefined;

  async deliver(message: Message): Promise<void> {
    this.calls.set(message.id, (this.calls.get(message.id) ?? 0) + 1);
    this.entered();
    if (this.hold) await this.hold;
    if (this.failNext.delete(message.id)) throw new Error('transport refused');
  }
}

function latch(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((resolve) => (release = resolve));
  return { promise, release };
}

/** One worker as a separate process would have it: its own pool, transaction host and transport. */
class Worker {
  readonly transport = new RecordingTransport();
  host!: TransactionHost;
  run!: DeliverDueMessages;
  queue!: TypeOrmMessageQueue;

  constructor(
    readonly dataSource: DataSource,
    clock: Clock,
    settings = new MessageDeliverySettings(new RetryBackoff({ baseMs: 1_000, maxMs: 60_000, jitter: 0 }), 5_000),
  ) {
    this.host = new TransactionHost(dataSource);
    this.queue = new TypeOrmMessageQueue(this.host);
    this.run = new DeliverDueMessages(new TypeOrmUnitOfWork(this.host), this.queue, this.transport, clock, settings);
  }

  /** Runs until a run finds nothing due. */
  async drain(batchSize: number): Promise<number> {
    let delivered = 0;
    for (;;) {
      const report = await this.run.execute(batchSize);
      delivered += report.delivered;
      if (report.claimed === 0) return delivered;
    }
  }
}

describe('message delivery over the PostgreSQL queue (real database)', () => {
  let url: string;
  let dataSource: DataSource;
  let messages: TypeOrmMessageRepository;
  let clock: TestClock;
  let ownerId: number;
  const extraSources: DataSource[] = [];

  const newSource = async () => {
    const source = await createDataSource(url).initialize();
    extraSources.push(source);
    return source;
  };

  beforeAll(async () => {
    url = await testDatabaseUrl();
    dataSource = await createDataSource(url).initialize();
  });

  beforeEach(async () => {
    await resetDatabase(dataSource);
    messages = new TypeOrmMessageRepository(new TransactionHost(dataSource));
    clock = new TestClock(new Date('2030-06-15T12:00:00.000Z'));
    const rows: Array<{ id: string }> = await dataSource.query(
      `INSERT INTO accounts (name, role) VALUES ('Sender', 'customer') RETURNING id`,
    );
    ownerId = Number(rows[0].id);
  });

  afterEach(async () => {
    await Promise.all(extraSources.splice(0).map((source) => source.destroy().catch(() => undefined)));
  });

  afterAll(() => dataSource.destroy());

  async function queue(count: number, prefix = 'message'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const message = Message.queue({ id: messages.nextId(), text: `${prefix} ${i}`, ownerId, now: clock.now() });
      await messages.add(message);
      ids.push(message.id);
    }
    return ids;
  }

  const row = async (id: string) =>
    (
      await dataSource.query(
        `SELECT status, attempts, next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt", last_error AS "lastError"
           FROM messages WHERE id = $1`,
        [id],
      )
    )[0];

  it('stores a queued message and reads it back through the repository', async () => {
    const [id] = await queue(1, 'stored');
    const read = await messages.findById(id);
    expect(read?.toSnapshot()).toEqual({
      id,
      text: 'stored 0',
      status: 'queued',
      createdAt: clock.now(),
      deliveredAt: null,
      ownerId,
    });
    expect(await row(id)).toEqual({ status: 'queued', attempts: 0, nextAttemptAt: clock.now(), deliveredAt: null, lastError: null });
  });

  it('claims nothing outside a transaction (the locks would be gone at once)', async () => {
    await expect(new TypeOrmMessageQueue(new TransactionHost(dataSource)).claimDue(clock.now(), 10)).rejects.toThrow(
      /inside UnitOfWork\.run/,
    );
  });

  it('delivers queued messages, oldest first, and records when', async () => {
    const ids = await queue(3);
    const worker = new Worker(dataSource, clock);
    clock.advance(250);
    expect(await worker.run.execute(10)).toEqual({ claimed: 3, delivered: 3, retried: 0 });
    expect([...worker.transport.calls.keys()]).toEqual(ids);
    for (const id of ids) {
      expect(await row(id)).toEqual(
        expect.objectContaining({ status: 'delivered', attempts: 1, deliveredAt: clock.now(), lastError: null }),
      );
      expect((await messages.findById(id))?.deliveredAt).toEqual(clock.now());
    }
    expect(await worker.run.execute(10)).toEqual({ claimed: 0, delivered: 0, retried: 0 });
  });

  it('retries a failed delivery with back-off: not before it is due, then delivered', async () => {
    const [failing, fine] = await queue(2);
    const worker = new Worker(dataSource, clock);
    worker.transport.failNext.add(failing);
    const failedAt = clock.now();

    expect(await worker.run.execute(10)).toEqual({ claimed: 2, delivered: 1, retried: 1 });
    expect(await row(failing)).toEqual({
      status: 'queued',
      attempts: 1,
      nextAttemptAt: new Date(failedAt.getTime() + 1_000),
      deliveredAt: null,
      lastError: 'Error: transport refused',
    });
    expect((await row(fine)).status).toBe('delivered');

    clock.advance(999);
    expect(await worker.run.execute(10)).toEqual({ claimed: 0, delivered: 0, retried: 0 });

    clock.advance(1);
    expect(await worker.run.execute(10)).toEqual({ claimed: 1, delivered: 1, retried: 0 });
    expect(await row(failing)).toEqual(
      expect.objectContaining({ status: 'delivered', attempts: 2, deliveredAt: clock.now(), lastError: null }),
    );
    expect(worker.transport.calls.get(failing)).toBe(2);
    expect(worker.transport.calls.get(fine)).toBe(1);
  });

  it('doubles the wait after each failure, up to the cap', async () => {
    const [id] = await queue(1);
    const worker = new Worker(
      dataSource,
      clock,
      new MessageDeliverySettings(new RetryBackoff({ baseMs: 1_000, maxMs: 4_000, jitter: 0 }), 5_000),
    );
    const waits: number[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      worker.transport.failNext.add(id);
      const failedAt = clock.now().getTime();
      expect((await worker.run.execute(10)).retried).toBe(1);
      const { nextAttemptAt, attempts } = await row(id);
      expect(attempts).toBe(attempt);
      waits.push(nextAttemptAt.getTime() - failedAt);
      clock.at = nextAttemptAt;
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 4_000, 4_000]);
    expect(await worker.run.execute(10)).toEqual({ claimed: 1, delivered: 1, retried: 0 });
    expect((await row(id)).attempts).toBe(6);
  });

  it('counts a delivery that hangs past the timeout as failed, and retries it', async () => {
    const [id] = await queue(1);
    const worker = new Worker(
      dataSource,
      clock,
      new MessageDeliverySettings(new RetryBackoff({ baseMs: 1_000, maxMs: 1_000, jitter: 0 }), 50),
    );
    const stuck = latch();
    worker.transport.hold = stuck.promise;
    expect(await worker.run.execute(10)).toEqual({ claimed: 1, delivered: 0, retried: 1 });
    expect(await row(id)).toEqual(
      expect.objectContaining({ status: 'queued', attempts: 1, lastError: 'Error: delivery timed out after 50 ms' }),
    );
    stuck.release();
  });

  it('SKIP LOCKED: a second worker neither waits for nor takes the messages a first one holds', async () => {
    const ids = await queue(10);
    const a = new Worker(await newSource(), clock);
    const b = new Worker(await newSource(), clock);

    // A takes the 5 oldest and keeps its transaction open inside its first delivery.
    const held = latch();
    const inside = latch();
    a.transport.hold = held.promise;
    a.transport.entered = inside.release;
    const runA = a.run.execute(5);
    await inside.promise;

    // B is not blocked by A's locks (it would wait forever without SKIP LOCKED): it takes the other 5.
    expect(await b.run.execute(10)).toEqual({ claimed: 5, delivered: 5, retried: 0 });
    expect(await b.run.execute(10)).toEqual({ claimed: 0, delivered: 0, retried: 0 });

    held.release();
    expect(await runA).toEqual({ claimed: 5, delivered: 5, retried: 0 });
    expect([...a.transport.calls.keys()]).toEqual(ids.slice(0, 5));
    expect([...b.transport.calls.keys()]).toEqual(ids.slice(5));
    for (const id of ids) expect((a.transport.calls.get(id) ?? 0) + (b.transport.calls.get(id) ?? 0)).toBe(1);
    const [{ delivered }] = await dataSource.query(`SELECT count(*)::int AS delivered FROM messages WHERE status = 'delivered'`);
    expect(delivered).toBe(10);
  });

  it('four racing workers deliver each of 120 messages exactly once', async () => {
    const ids = await queue(120);
    const workers = await Promise.all(Array.from({ length: 4 }, async () => new Worker(await newSource(), clock)));
    const delivered = await Promise.all(workers.map((worker) => worker.drain(7)));
    expect(delivered.reduce((sum, n) => sum + n, 0)).toBe(120);
    for (const id of ids) {
      expect(workers.reduce((sum, worker) => sum + (worker.transport.calls.get(id) ?? 0), 0)).toBe(1);
    }
    const [{ queued }] = await dataSource.query(`SELECT count(*)::int AS queued FROM messages WHERE status = 'queued'`);
    expect(queued).toBe(0);
  });

  it('at least once: when a worker dies mid-batch, its messages go back to the queue and another delivers them', async () => {
    const [id] = await queue(1);
    const doomed = new Worker(await newSource(), clock);
    const held = latch();
    const inside = latch();
    doomed.transport.hold = held.promise;
    doomed.transport.entered = inside.release;
    const doomedRun = doomed.run.execute(10);
    await inside.promise;

    // The process "dies": its connection goes, and PostgreSQL rolls its transaction back.
    const locks: Array<{ pid: number }> = await dataSource.query(
      `SELECT DISTINCT l.pid FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
        WHERE l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND c.relname = 'messages' AND l.mode = 'RowShareLock' AND l.pid <> pg_backend_pid()`,
    );
    expect(locks).toHaveLength(1);
    await dataSource.query(`SELECT pg_terminate_backend($1)`, [locks[0].pid]);
    held.release();
    await expect(doomedRun).rejects.toThrow();

    const survivor = new Worker(await newSource(), clock);
    expect(await survivor.run.execute(10)).toEqual({ claimed: 1, delivered: 1, retried: 0 });
    expect(doomed.transport.calls.get(id)).toBe(1);
    expect(survivor.transport.calls.get(id)).toBe(1);
    expect((await row(id)).status).toBe('delivered');
  });

  it('lists oldest first by the internal sequence, filtered by status, page by page', async () => {
    const ids = await queue(5);
    const worker = new Worker(dataSource, clock);
    await worker.run.execute(2); // the two oldest are delivered
    const first = await messages.list({}, { limit: 3 });
    expect(first.items.map((m) => m.id)).toEqual(ids.slice(0, 3));
    expect(first.nextAfterId).toEqual(expect.any(Number));
    const second = await messages.list({}, { limit: 3, afterId: first.nextAfterId ?? undefined });
    expect(second.items.map((m) => m.id)).toEqual(ids.slice(3));
    expect(second.nextAfterId).toBeNull();
    expect((await messages.list({ status: 'delivered' }, { limit: 10 })).items.map((m) => m.id)).toEqual(ids.slice(0, 2));
    expect((await messages.list({ status: 'queued' }, { limit: 10 })).items.map((m) => m.id)).toEqual(ids.slice(2));
  });
});
