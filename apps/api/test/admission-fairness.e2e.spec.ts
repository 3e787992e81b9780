import { connect, type Socket } from 'node:net';
import { eventually } from './support/eventually';
import { ADMIN_KEY, TestApp, TestResponse } from './support/test-app';

/**
 * What one impolite client does to the others with admission on (issue 48), on a real app and a real database: slow
 * uploads that hold no slot, a trickling body cut by the minimum rate, and a flood from one key that leaves another
 * customer and an administrator served. A small limit (min = max), so that a few dozen connections are pressure.
 * Nothing here is timed: each test counts what was answered.
 */
jest.setTimeout(120_000);

/** A raw connection sending a request's head and the start of its body, then one byte every `everyMs`. */
interface Trickle {
  socket: Socket;
  /** Everything the server sent back. */
  received: () => string;
  closed: Promise<void>;
}

function trickle(baseUrl: string, path: string, everyMs: number, headers = ''): Promise<Trickle> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    let data = '';
    let timer: NodeJS.Timeout | undefined;
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n${headers}\r\n` +
          '{"name":"',
      );
      timer = setInterval(() => socket.writable && socket.write('a'), everyMs);
      resolve({ socket, received: () => data, closed });
    });
    const closed = new Promise<void>((done) =>
      socket.on('close', () => {
        clearInterval(timer);
        done();
      }),
    );
    socket.on('data', (chunk) => (data += chunk));
    socket.on('error', (error) => (timer ? undefined : reject(error)));
  });
}

/** The value of one sample of /metrics (exempt from admission). */
async function metric(api: TestApp, sample: string): Promise<number | undefined> {
  const text = (await api.get('/metrics', { key: ADMIN_KEY })).body as string;
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

const is2xx = (response: TestResponse) => response.status >= 200 && response.status < 300;

describe('slow uploads (admission on, a limit of 4)', () => {
  let api: TestApp;
  let reader: string;
  const trickles: Trickle[] = [];

  beforeAll(async () => {
    api = await TestApp.start({
      // The body rule's grace longer than the test: the 80 bodies are still arriving while the reads are made.
      admission: { mode: 'on', limitMin: 4, limitMax: 4, queueMs: 50, loopDelayMs: 0 },
      http: { bodyTimeoutMs: 60_000, bodyMinRate: 500 },
    });
    reader = (await api.customer('Reader')).key;
  });

  afterAll(async () => {
    for (const t of trickles) t.socket.destroy();
    await api.close();
  });

  it("80 bodies trickling with no API key hold no slot: another customer's reads are all answered", async () => {
    for (let i = 0; i < 80; i++) trickles.push(await trickle(api.baseUrl, '/pets', 500));
    // Every one of them has reached the server: its connection is open and its head was sent with it.
    await eventually(
      () => new Promise<number>((resolve) => api.app.getHttpServer().getConnections((_e, n: number) => resolve(n))),
      (n) => n >= 80,
    );
    // None holds a slot while its body arrives (header-time admission had 4 in flight and 4 queued here).
    expect(await metric(api, 'admission_in_flight')).toBe(0);

    const reads: TestResponse[] = [];
    for (let i = 0; i < 20; i++) {
      reads.push(await api.get(i % 2 ? '/pets' : '/accounts/me', { key: reader }));
    }
    expect(reads.map((r) => r.status)).toEqual(reads.map(() => 200));
    // The 80 are still open, unanswered: only the rule below (or the request timeout) ends them.
    expect(trickles.filter((t) => !t.socket.destroyed && t.received() === '')).toHaveLength(80);
  });
});

describe('the slow-upload rule (HTTP_BODY_TIMEOUT_MS 1 s, HTTP_BODY_MIN_RATE 100)', () => {
  let api: TestApp;

  beforeAll(async () => {
    api = await TestApp.start({
      admission: { mode: 'on' },
      // The request and handler timeouts a minute away: a 408 here can only be the rule's.
      http: { bodyTimeoutMs: 1000, bodyMinRate: 100, requestTimeoutMs: 60_000, handlerTimeoutMs: 60_000 },
    });
  });
  afterAll(() => api.close());

  it('cuts a body trickling a byte every 100 ms: 408 request_timeout, the Error shape, socket closed', async () => {
    const slow = await trickle(api.baseUrl, '/accounts', 100);
    await slow.closed;
    const [head, body] = slow.received().split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 408 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(head.toLowerCase()).toMatch(/x-request-id: \S+/);
    expect(JSON.parse(body)).toMatchObject({
      status: 408,
      code: 'request_timeout',
      message: expect.stringMatching(/too slowly/),
    });
    // A body sent at once is not affected.
    expect((await api.post('/accounts', { body: { name: 'Quick' } })).status).toBe(201);
  });
});

describe("one customer's flood (admission on, a limit of 4)", () => {
  let api: TestApp;
  let flooder: string;
  let other: string;

  beforeAll(async () => {
    api = await TestApp.start({
      // The governor off: its cuts depend on this host's load, and the shares are what is tested here. The queue's
      // wait long enough for a loaded host: a request within its share waits for the next slot, however long.
      admission: { mode: 'on', limitMin: 4, limitMax: 4, queueMs: 2_000, loopDelayMs: 0 },
      auth: { rateLimitPerMinute: 200 },
    });
    [flooder, other] = await api.customers(2, 'Fair');
  });
  afterAll(() => api.close());

  it('leaves another customer and an administrator served; the flooder gets its own 429 or 503', async () => {
    let flooding = true;
    const flood: number[] = [];
    // 40 connections from one key, each sending its next request as soon as the last is answered.
    const loops = Array.from({ length: 40 }, async () => {
      while (flooding) flood.push((await api.get('/pets', { key: flooder })).status);
    });
    await eventually(
      () => flood.length,
      (n) => n >= 100,
    );
    const others: TestResponse[] = [];
    const admins: TestResponse[] = [];
    await Promise.all([
      (async () => {
        for (let i = 0; i < 30; i++) others.push(await api.get(i % 2 ? '/pets' : '/accounts/me', { key: other }));
      })(),
      (async () => {
        for (let i = 0; i < 30; i++) admins.push(await api.get(i % 2 ? '/pets' : '/accounts/me', { key: ADMIN_KEY }));
      })(),
    ]);
    flooding = false;
    await Promise.all(loops);

    expect(others.filter(is2xx).length).toBeGreaterThanOrEqual(27);
    expect(admins.filter(is2xx).length).toBeGreaterThanOrEqual(27);
    // Each refusal of the flooder is its own (429 from its budget, 503 from its share), never a 5xx of another kind.
    const refused = flood.filter((status) => status === 429 || status === 503);
    expect(refused.length).toBeGreaterThan(0);
    expect(flood.filter((status) => status !== 200 && status !== 429 && status !== 503)).toEqual([]);
    expect(api.violations).toEqual([]);
  });
});
