import { Client } from 'pg';
import { Drain } from '../src/common/drain/drain.service';
import { eventually } from './support/eventually';
import { capturedLog } from './support/log-capture';
import { lockWaiters, sessionsInTransaction } from './support/sessions';
import { ADMIN_KEY, TestApp, TestResponse, expectError } from './support/test-app';

/**
 * A request the service gives up on (its handler timeout passed, or the shutdown deadline) has been answered 503:
 * its transaction must not commit afterwards, or a client retrying the 503 without an Idempotency-Key orders twice.
 * If its COMMIT was already on its way, the answer says the outcome is unknown (`outcome_unknown`) instead.
 * The order's transaction is held by a row lock (or, at its COMMIT, an advisory lock) a test connection holds.
 */
const HANDLER_TIMEOUT_MS = 1000;
jest.setTimeout(60_000);

describe('a request cut off does not commit afterwards (HTTP, real PostgreSQL)', () => {
  let api: TestApp;
  let locker: Client;
  let customer: { key: string; id: number };
  let petId: number;

  beforeAll(async () => {
    api = await TestApp.start({ http: { handlerTimeoutMs: HANDLER_TIMEOUT_MS } });
    locker = new Client({ connectionString: api.databaseUrl });
    await locker.connect();
    customer = await api.customer('Cut off');
    const category = await api.post('/categories', { key: ADMIN_KEY, body: { name: 'Cut-off kind' } });
    const pet = await api.post('/pets', {
      key: ADMIN_KEY,
      body: { name: 'Cut-off pet', categoryId: category.body.id },
    });
    petId = pet.body.id;
    expect((await api.put(`/store/inventory/${petId}`, { key: ADMIN_KEY, body: { quantity: 50 } })).status).toBe(200);
  });

  afterAll(async () => {
    await locker.query('ROLLBACK').catch(() => undefined);
    await locker.query('DROP TRIGGER IF EXISTS cut_off_at_commit ON orders').catch(() => undefined);
    await locker.query('DROP FUNCTION IF EXISTS cut_off_at_commit()').catch(() => undefined);
    await locker.end();
    await api.close();
  });

  const order = (headers: Record<string, string> = {}) =>
    api.post('/store/orders', { key: customer.key, body: { petId, quantity: 1 }, headers });

  async function committed(): Promise<{ orders: number; stock: number }> {
    const [row] = await api.sql<{ orders: number; stock: number }>(
      `SELECT (SELECT count(*)::int FROM orders WHERE pet_id = $1) AS orders,
              (SELECT quantity FROM stock WHERE pet_id = $1) AS stock`,
      [petId],
    );
    return row;
  }

  /** Resolves once some other session of this database waits for a lock. */
  async function someoneWaits(): Promise<void> {
    await eventually(
      () => lockWaiters(locker),
      (n) => n > 0,
    );
  }

  /** Waits until no session but ours is inside a transaction (the order's has ended, one way or the other). */
  async function transactionsEnded(): Promise<void> {
    await eventually(
      () => sessionsInTransaction(locker),
      (n) => n === 0,
    );
  }

  function expectNotDone(answer: TestResponse): void {
    expectError(answer, 503, 'service_unavailable');
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  }

  it('past HTTP_HANDLER_TIMEOUT_MS: 503 service_unavailable, and the order never commits', async () => {
    const before = await committed();
    await locker.query('BEGIN');
    await locker.query('SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE', [petId]);
    const pending = order();
    await someoneWaits();
    const answer = await pending;
    await locker.query('COMMIT'); // the order's transaction goes on, up to its COMMIT
    expectNotDone(answer);
    await transactionsEnded();
    expect(await committed()).toEqual(before);
    // The 503 is safe to retry as it is: the retry is the one order.
    expect((await order()).status).toBe(201);
    expect(await committed()).toEqual({ orders: before.orders + 1, stock: before.stock - 1 });
  });

  it('cut off at the shutdown deadline (SHUTDOWN_TIMEOUT_MS): answered 503, and the order never commits', async () => {
    const { lines, logger } = capturedLog();
    const other = await TestApp.startOn(api.databaseUrl, { http: { handlerTimeoutMs: 30_000 } }, { logger });
    try {
      const before = await committed();
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM stock WHERE pet_id = $1 FOR UPDATE', [petId]);
      const pending = other.post('/store/orders', { key: customer.key, body: { petId, quantity: 1 } });
      await someoneWaits();
      const drain = other.app.get(Drain);
      await expect(drain.drain(200)).resolves.toBe(false);
      await expect(drain.cutOff()).resolves.toBe(1);
      const answer = await pending;
      await locker.query('COMMIT');
      expectNotDone(answer);
      expect(answer.headers.get('connection')).toBe('close');
      // Its access line, as for any answer.
      const id = answer.headers.get('x-request-id');
      await eventually(() =>
        lines.some((l) => l['requestId'] === id && l['route'] === '/store/orders' && l['status'] === 503),
      );
      await transactionsEnded();
      expect(await committed()).toEqual(before);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await other.close();
    }
  });

  it('cut off while its COMMIT is on its way: 503 outcome_unknown; the same Idempotency-Key replays it', async () => {
    // A deferred constraint trigger runs at COMMIT: it waits there for an advisory lock the test holds.
    await locker.query(`CREATE FUNCTION cut_off_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN PERFORM pg_advisory_xact_lock(736101); RETURN NULL; END $$`);
    await locker.query(`CREATE CONSTRAINT TRIGGER cut_off_at_commit AFTER INSERT ON orders
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION cut_off_at_commit()`);
    try {
      const before = await committed();
      await locker.query('BEGIN');
      await locker.query('SELECT pg_advisory_xact_lock(736101)');
      const key = `cut-off-${Date.now()}`;
      const pending = order({ 'Idempotency-Key': key });
      await someoneWaits();
      const answer = await pending;
      await locker.query('COMMIT');
      expectError(answer, 503, 'outcome_unknown');
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
      await transactionsEnded();
      // It was done, once; the retry with its key says so instead of ordering again.
      expect(await committed()).toEqual({ orders: before.orders + 1, stock: before.stock - 1 });
      const retry = await order({ 'Idempotency-Key': key });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBe('true');
      expect(await committed()).toEqual({ orders: before.orders + 1, stock: before.stock - 1 });
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      await locker.query('DROP TRIGGER IF EXISTS cut_off_at_commit ON orders');
      await locker.query('DROP FUNCTION IF EXISTS cut_off_at_commit()');
    }
  });
});
