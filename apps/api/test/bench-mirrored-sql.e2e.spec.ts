import { Client } from 'pg';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp } from './support/test-app';

// The bench's `mirrored` baseline (tools/bench/raw-server.mjs) claims to send the service's own statements; this holds
// it to that. Its texts (tools/bench/mirrored-sql.cjs) must each be among what the service sends for the bench's
// requests: a repository whose SQL changes fails this until the baseline follows.
// tools/bench is no Nx project and exports no API: this reads the baseline's statements, a data file.
// eslint-disable-next-line @nx/enforce-module-boundaries
const MIRRORED = require('../../../tools/bench/mirrored-sql.cjs') as Record<string, string>;

/** The order sequence's INCREMENT: SequenceBlocks hands out this many ids per `nextval`. */
const ORDER_ID_BLOCK = 50;

const normalised = (sql: string) => sql.replace(/\s+/g, ' ').trim();

describe("the bench's mirrored baseline sends the service's statements (HTTP, real PostgreSQL)", () => {
  let api: TestApp;
  let store: StoreFixtures;
  const sent = new Set<string>();
  const original = Client.prototype.query;

  beforeAll(async () => {
    // Every statement any pg client of this process sends, recorded on its way (it still runs as sent).
    const record = function (this: Client, config: unknown, ...rest: unknown[]) {
      const text = typeof config === 'string' ? config : (config as { text?: string } | null)?.text;
      if (text) sent.add(normalised(text));
      return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
    };
    (Client.prototype as unknown as { query: typeof record }).query = record;
    api = await TestApp.start();
    store = await StoreFixtures.on(api);
  });
  afterAll(async () => {
    Client.prototype.query = original;
    await store?.close();
    await api?.close();
  });

  it('has every statement of the baseline among those the service sends for the same requests', async () => {
    const plenty = await store.pet({ quantity: 100 });
    const last = await store.pet({ quantity: 1 });
    const lastAgain = await store.pet({ quantity: 1 });
    const after = Buffer.from(JSON.stringify({ after: plenty })).toString('base64url');
    sent.clear();
    // A key not seen before: the lookup by its hash and its last use are sent, as for the bench's first request.
    const { key } = await api.customer('Bench mirror');
    const reads = [
      '/categories?limit=20',
      `/pets?ids=${plenty},${last}`,
      `/pets/${plenty}`,
      '/pets?status=available&limit=20',
      `/pets?status=available&limit=20&cursor=${after}`,
      '/store/inventory',
    ];
    for (const path of reads) expect([path, (await api.get(path, { key })).status]).toEqual([path, 200]);
    // Orders that leave units, past the first block of order ids (the sequence's increment, 50), then two that take
    // the last unit (the pet becomes pending): the second as the bench's, whose "does anyone subscribe?" questions
    // are all answered from memory (a first question is a statement, which sends the writes held before it), then a
    // message.
    for (const petId of [...Array<number>(ORDER_ID_BLOCK + 1).fill(plenty), last, lastAgain]) {
      expect((await api.post('/store/orders', { key, body: { petId, quantity: 1 } })).status).toBe(201);
    }
    expect((await api.post('/messages', { key: ADMIN_KEY, body: { message: 'Hello' } })).status).toBe(202);

    const missing = Object.entries(MIRRORED).filter(([, sql]) => !sent.has(normalised(sql)));
    expect(missing.map(([name, sql]) => `${name}: ${normalised(sql)}`)).toEqual([]);
    expect(Object.keys(MIRRORED).length).toBeGreaterThan(10);
  });
});
