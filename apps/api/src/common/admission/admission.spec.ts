import Fastify, { FastifyInstance } from 'fastify';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AddressInfo } from 'node:net';
import { Metrics } from '../../metrics/metrics';
import { FrontDoor } from '../http-kit/front-door';
import { Admission, Client, LoadSignals, LoadWindow, Refusal } from './admission';

/**
 * Admission alone in front of a bare Fastify (FrontDoor, as create-app.ts puts it) over real HTTP: handlers that wait
 * for the test to let them go, so that what is in flight, queued or refused depends on the order of events only (the
 * queue's wait is a minute: never reached).
 */
describe('Admission (in front of a bare Fastify)', () => {
  let fastify: FastifyInstance;
  let admission: Admission;
  let metrics: Metrics;
  let baseUrl: string;
  const gates = new Map<string, () => void>();
  const started: string[] = [];
  /** Requests that reached an onRequest hook registered after admission's. */
  const laterHook: string[] = [];
  /** A request context entered after admission, as the pipeline's WorkScope is; the handler reads it. */
  const context = new AsyncLocalStorage<string>();
  const contexts = new Map<string, string | undefined>();
  /** What the access log and the HTTP metrics were handed of each refusal. */
  const refusals: Refusal[] = [];
  let ids = 0;
  /**
   * The loop governor off (0) but in its own test: on a loaded machine (a CI host losing time to its neighbours) it
   * could cut the limit of 2 to 1 while a test holds both slots, and a queued request would wait for ever.
   */
  let loopDelayMs = 0;
  /** The governor's signals, given by a test; else the process's own. */
  let load: LoadSignals | undefined;
  /** Who sends a request, given by a test; else its address (all of them 127.0.0.1). */
  let clientOf: ((request: { headers: Record<string, unknown> }) => Client) | undefined;

  beforeEach(async () => {
    gates.clear();
    started.length = 0;
    laterHook.length = 0;
    contexts.clear();
    metrics = new Metrics();
    refusals.length = 0;
    const door = new FrontDoor();
    fastify = Fastify({ forceCloseConnections: true, serverFactory: door.serverFactory });
    admission = new Admission({ mode: 'on', limitMin: 2, limitMax: 2, queueMs: 60_000, loopDelayMs }, metrics, {
      requestId: () => `id-${++ids}`,
      onRefused: (refusal) => refusals.push(refusal),
      load,
      clientOf,
    });
    admission.watchRoutes(fastify);
    door.install((next) => admission.front(next));
    fastify.addHook('onRequest', (request, _reply, done) => {
      laterHook.push(request.url);
      context.run(request.url, done);
    });
    const handler = async (request: { params: unknown; method: string }) => {
      const name = `${request.method} ${(request.params as { name: string }).name}`;
      started.push(name);
      contexts.set(name, context.getStore());
      if (name.endsWith('held')) await new Promise<void>((resolve) => gates.set(name, resolve));
      return { name };
    };
    fastify.get('/work/:name', handler);
    fastify.post('/work/:name', handler);
    fastify.get('/health/live', async () => ({ status: 'ok' }));
    await fastify.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(fastify.server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    for (const release of gates.values()) release();
    await fastify.close();
  });

  const call = (method: string, name: string, signal?: AbortSignal, client?: string) =>
    fetch(`${baseUrl}/work/${name}`, { method, signal, headers: client ? { 'x-client': client } : {} }).then(
      async (r) => ({
        status: r.status,
        headers: r.headers,
        body: (await r.json()) as Record<string, unknown>,
      }),
    );

  async function until(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(condition()).toBe(true);
  }

  async function shed(route: string): Promise<number> {
    const metric = await metrics.registry.getSingleMetric('admission_shed_total')?.get();
    return metric?.values.find((v) => v.labels['route'] === route)?.value ?? 0;
  }

  it('admits up to the limit, queues reads in arrival order, writes in half the queue, refuses the rest', async () => {
    const first = call('GET', 'a-held');
    const second = call('GET', 'b-held');
    await until(() => started.length === 2);
    expect(admission.inFlight).toBe(2);

    const queuedRead = call('GET', 'c');
    await until(() => admission.queued === 1);
    // Half the queue (1 of 2) is taken: a write is refused at once, a read still queues.
    const write = await call('POST', 'd');
    expect(write.status).toBe(503);
    expect(write.headers.get('retry-after')).toBe('1');
    // The Error shape, the request id and the security headers, from the hook itself: no later hook saw it.
    expect(write.body).toMatchObject({ status: 503, code: 'overloaded', documentationUrl: expect.any(String) });
    expect(write.body['message']).toMatch(/overloaded/);
    expect(write.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(write.headers.get('x-content-type-options')).toBe('nosniff');
    expect(write.headers.get('cache-control')).toBe('no-store');
    expect(laterHook).not.toContain('/work/d');
    // Fastify never saw it: its route (from the routes' copy) and request id go to the access log and the metrics.
    expect(refusals).toEqual([
      {
        requestId: write.headers.get('x-request-id'),
        method: 'POST',
        route: '/work/:name',
        status: 503,
        durationMs: expect.any(Number),
      },
    ]);
    const secondQueuedRead = call('GET', 'e');
    await until(() => admission.queued === 2);
    expect((await call('GET', 'f')).status).toBe(503);
    // A URL no route matches counts like any other; its label is never the URL.
    expect((await fetch(`${baseUrl}/nowhere/42?x=1`)).status).toBe(503);
    expect(refusals.map((refusal) => refusal.route)).toEqual(['/work/:name', '/work/:name', '(unmatched)']);
    // Exempt: answered while saturated, and not counted.
    expect((await fetch(`${baseUrl}/health/live`)).status).toBe(200);
    expect(admission.inFlight).toBe(2);

    gates.get('GET a-held')?.();
    expect((await first).status).toBe(200);
    expect((await queuedRead).status).toBe(200);
    expect((await secondQueuedRead).status).toBe(200);
    expect(started).toEqual(['GET a-held', 'GET b-held', 'GET c', 'GET e']);
    // Only the admitted reached the hooks after admission's, the queued ones once admitted: each in a context of its
    // own, though admitted from the 'close' of the request that ended (a-held).
    expect(laterHook).toEqual(['/work/a-held', '/work/b-held', '/health/live', '/work/c', '/work/e']);
    expect(contexts.get('GET c')).toBe('/work/c');
    expect(contexts.get('GET e')).toBe('/work/e');
    gates.get('GET b-held')?.();
    expect((await second).status).toBe(200);
    await until(() => admission.inFlight === 0);
    expect(admission.queued).toBe(0);
    expect(await shed('/work/:name')).toBe(2);
  });

  it('never runs the handler of a queued request whose client went away: it is shed in its turn', async () => {
    const held = [call('GET', 'a-held'), call('GET', 'b-held')];
    await until(() => started.length === 2);
    const controller = new AbortController();
    const gone = call('GET', 'gone', controller.signal).catch(() => 'aborted');
    await until(() => admission.queued === 1);
    controller.abort();
    expect(await gone).toBe('aborted');
    const next = call('GET', 'next');
    await until(() => admission.queued === 2);
    gates.get('GET a-held')?.();
    expect((await next).status).toBe(200);
    expect(started).toEqual(['GET a-held', 'GET b-held', 'GET next']);
    expect(await shed('/work/:name')).toBe(1);
    gates.get('GET b-held')?.();
    await Promise.all(held);
    await until(() => admission.inFlight === 0);
  });

  describe('with the loop governor (a 10 ms target), its signals given by the test', () => {
    /** What the governor reads at the end of each 100 ms window, and how many windows it has read. */
    let reading: LoadWindow;
    let windows = 0;
    const quiet: LoadWindow = { delayMs: 2, busy: 0.3, cpu: 0.3 };
    beforeAll(() => {
      loopDelayMs = 10;
      load = { start: () => undefined, read: () => (windows++, { ...reading }), stop: () => undefined };
    });
    afterAll(() => {
      loopDelayMs = 0;
      load = undefined;
    });
    beforeEach(() => {
      reading = quiet;
      windows = 0;
    });

    async function windowsPass(n: number): Promise<void> {
      const until_ = windows + n;
      await until(() => windows >= until_);
    }

    it('lowers the limit below its floor while its own load saturates the thread, and lifts it after', async () => {
      const held = [call('GET', 'a-held'), call('GET', 'b-held')];
      await until(() => started.length === 2);
      const queued = call('GET', 'c');
      await until(() => admission.queued === 1);
      expect(admission.limit).toBe(2);
      // A request waiting all along, the loop's delay over its target, the thread busy with its own CPU.
      reading = { delayMs: 40, busy: 0.98, cpu: 1 };
      await until(() => admission.governor.cap < Infinity);
      expect(admission.limit).toBe(1);
      const gauge = await metrics.registry.getSingleMetric('admission_limit')?.get();
      expect(gauge?.values[0].value).toBe(1);
      // The queue's room is the limit (1, taken): the next read is refused.
      expect((await call('GET', 'd')).status).toBe(503);

      reading = quiet;
      gates.get('GET a-held')?.();
      gates.get('GET b-held')?.();
      expect((await queued).status).toBe(200);
      await Promise.all(held);
      // Nothing waits and the loop keeps up: the cap lifts, the gradient's limit (the floor, 2) is back.
      await until(() => admission.limit === 2);
      expect(admission.governor.cap).toBe(Infinity);
    });

    it("a noisy neighbour's signals (its own CPU half its busy time) keep the limit: reads queue", async () => {
      const held = [call('GET', 'a-held'), call('GET', 'b-held')];
      await until(() => started.length === 2);
      const queued = call('GET', 'c');
      await until(() => admission.queued === 1);
      // The same delay and utilisation as above, but the process had the core for half its busy time.
      reading = { delayMs: 40, busy: 0.98, cpu: 0.5 };
      await windowsPass(5);
      expect(admission.governor.cap).toBe(Infinity);
      expect(admission.limit).toBe(2);
      const second = call('GET', 'd');
      await until(() => admission.queued === 2);
      expect(refusals).toEqual([]);
      reading = quiet;
      gates.get('GET a-held')?.();
      gates.get('GET b-held')?.();
      expect((await Promise.all([queued, second, ...held])).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    });
  });

  describe('fair shares (the client named by an x-client header here; `admin` an administrator)', () => {
    beforeAll(() => {
      clientOf = (request) => {
        const name = String(request.headers['x-client'] ?? 'nobody');
        return { key: name, admin: name === 'admin' };
      };
    });
    afterAll(() => (clientOf = undefined));
    const by = (client: string, name: string) => call('GET', name, undefined, client);

    it('refuses a client at its share at once while another waits; admits the one within its share first', async () => {
      const held = [by('a', 'a1-held'), by('a', 'a2-held')];
      await until(() => started.length === 2);
      // Alone, a client may use the whole limit and the queue.
      const aQueued = by('a', 'a3');
      await until(() => admission.queued === 1);
      // Another client: a's share is now 1 of the limit of 2 (it has 3), b's 1 (it has none): b waits, a is refused.
      const bQueued = by('b', 'b1');
      await until(() => admission.queued === 2);
      const aRefused = await by('a', 'a4');
      expect(aRefused.status).toBe(503);
      expect(aRefused.body).toMatchObject({ code: 'overloaded' });
      // b at its share (one waiting): its next is refused too, the queue's room notwithstanding.
      expect((await by('b', 'b2')).status).toBe(503);
      // An administrator is admitted at once, beyond the limit.
      const admin = by('admin', 'admin-held');
      await until(() => started.includes('GET admin-held'));
      expect(admission.inFlight).toBe(3);
      gates.get('GET admin-held')?.();
      expect((await admin).status).toBe(200);
      // A slot frees: b's request, within its share, goes before a's older one.
      gates.get('GET a1-held')?.();
      expect((await bQueued).status).toBe(200);
      expect(started.indexOf('GET b1')).toBeLessThan(started.indexOf('GET a3'));
      gates.get('GET a2-held')?.();
      expect((await aQueued).status).toBe(200);
      await Promise.all(held);
      await until(() => admission.inFlight === 0);
    });

    it('a full queue makes room for another client: the newest waiter of the client over its share goes', async () => {
      const held = [by('a', 'a1-held'), by('a', 'a2-held')];
      await until(() => started.length === 2);
      const aFirst = by('a', 'a3');
      await until(() => admission.queued === 1);
      const aNewest = by('a', 'a4');
      await until(() => admission.queued === 2);
      // The queue is full (its room is the limit, 2), all of it a's: b's read takes the place of a's newest.
      const b = by('b', 'b1');
      expect((await aNewest).status).toBe(503);
      await until(() => admission.queued === 2);
      gates.get('GET a1-held')?.();
      gates.get('GET a2-held')?.();
      expect((await Promise.all([b, aFirst, ...held])).map((r) => r.status)).toEqual([200, 200, 200, 200]);
      expect(started).not.toContain('GET a4');
    });
  });

  it('on close, refuses what still waits for a slot at once, and admits again after', async () => {
    const held = [call('GET', 'a-held'), call('GET', 'b-held')];
    await until(() => started.length === 2);
    const queued = [call('GET', 'c'), call('GET', 'd')];
    await until(() => admission.queued === 2);
    // The queue's wait is a minute: only close() answers them now.
    admission.close();
    const answers = await Promise.all(queued);
    expect(answers.map((answer) => answer.status)).toEqual([503, 503]);
    expect(answers[0].body).toMatchObject({ code: 'overloaded' });
    expect(admission.queued).toBe(0);
    expect(started).toEqual(['GET a-held', 'GET b-held']);
    expect(await shed('/work/:name')).toBe(2);
    gates.get('GET a-held')?.();
    gates.get('GET b-held')?.();
    await Promise.all(held);
    await until(() => admission.inFlight === 0);
    expect((await call('GET', 'e')).status).toBe(200);
  });

  it('counts a request whose client went away while in flight as finished', async () => {
    const controller = new AbortController();
    const gone = call('GET', 'a-held', controller.signal).catch(() => 'aborted');
    await until(() => admission.inFlight === 1);
    controller.abort();
    expect(await gone).toBe('aborted');
    await until(() => admission.inFlight === 0);
  });
});
