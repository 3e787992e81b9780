import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { WorkScope } from '@petstore/application';
import { Client } from 'pg';
import { StoreFixtures } from './support/store-fixtures';
import { ADMIN_KEY, TestApp } from './support/test-app';

// The bench's `mirrored` baseline (tools/bench/raw-server.mjs) sends the service's own statements, read from the
// snapshots in tools/bench/sql/: this spec serves the bench's requests with the service, records the statements each
// request sends, and fails while a snapshot differs from them. `npm run bench:sql` (BENCH_SQL_WRITE=1) writes them
// afresh instead: after a repository's SQL changes, run it, and follow in raw-server.mjs any parameter that changed
// (its last test here serves the bench's requests with it).
// tools/bench is no Nx project and exports no API: this reads the snapshots' format, a data file's.
// eslint-disable-next-line @nx/enforce-module-boundaries
const { SQL_DIR, formatStatements, parseStatements } = require('../../../tools/bench/service-sql.cjs') as {
  SQL_DIR: string;
  formatStatements: (header: string, statements: Statement[]) => string;
  parseStatements: (source: string) => Statement[];
};
const RAW_SERVER = join(__dirname, '../../../tools/bench/raw-server.mjs');
const WRITE = process.env['BENCH_SQL_WRITE'] === '1';

interface Statement {
  name: string;
  text: string;
}

/** The order sequence's INCREMENT: SequenceBlocks hands out this many ids per `nextval`. */
const ORDER_ID_BLOCK = 50;
/** What a transaction's bounds are; the baseline sends its own. */
const BOUNDS = new Set(['BEGIN', 'COMMIT', 'ROLLBACK']);

/** A request the bench sends, the snapshot file of what the service sends for it, and a name per statement. */
interface Step {
  file: string;
  title: string;
  names: string[];
  /** Sends the request with `id` as its X-Request-Id; answers its status. */
  send: (id: string) => Promise<number>;
  status: number;
}

describe("the bench's mirrored baseline sends the service's statements (HTTP, real PostgreSQL)", () => {
  let api: TestApp;
  let store: StoreFixtures;
  let key: string;
  let pets: { plenty: number; last: number; lastAgain: number; forRaw: number; lastForRaw: number };
  let deepCursor: string;
  /** What each request sent, by the request's id (the WorkScope every statement of a request runs in). */
  const sent = new Map<string, string[]>();
  const recorded = new Map<string, Statement[]>();
  const original = Client.prototype.query;

  beforeAll(async () => {
    // Every statement a request of this process sends, recorded on its way (it still runs as sent). Work outside a
    // request (the LISTEN connection's heartbeat, pg-boss's maintenance) has no WorkScope and is left out.
    const record = function (this: Client, config: unknown, ...rest: unknown[]) {
      const text = typeof config === 'string' ? config : (config as { text?: string } | null)?.text;
      const request = WorkScope.current()?.requestId;
      if (text && request && !BOUNDS.has(text)) sent.set(request, [...(sent.get(request) ?? []), text]);
      return (original as (...args: unknown[]) => unknown).call(this, config, ...rest);
    };
    (Client.prototype as unknown as { query: typeof record }).query = record;
    // Verified keys stay cached for the whole run, as they do between the bench's lookups: no lookup in the middle.
    api = await TestApp.start({ auth: { apiKeyCacheSeconds: 3600 } });
    store = await StoreFixtures.on(api);
    pets = {
      plenty: await store.pet({ quantity: 1000 }),
      last: await store.pet({ quantity: 1 }),
      lastAgain: await store.pet({ quantity: 1 }),
      forRaw: await store.pet({ quantity: 1000 }),
      lastForRaw: await store.pet({ quantity: 1 }),
    };
    deepCursor = Buffer.from(JSON.stringify({ after: pets.plenty })).toString('base64url');
    // A key not seen before: its lookup by hash and its last use are sent, as for the bench's first request.
    ({ key } = await api.customer('Bench mirror'));
    for (const [i, step] of steps().entries()) recorded.set(step.file, await statementsOf(step, `bench-sql-${i}`));
  });
  afterAll(async () => {
    Client.prototype.query = original;
    await store?.close();
    await api?.close();
  });

  /** Sends the step's request (the bench's) and names what the service sent for it, in order. */
  async function statementsOf(step: Step, id: string): Promise<Statement[]> {
    expect([step.file, await step.send(id)]).toEqual([step.file, step.status]);
    const texts = sent.get(id) ?? [];
    if (texts.length !== step.names.length) {
      throw new Error(
        `${step.title}: the service now sends ${texts.length} statements, named here ${step.names.join(', ')}. ` +
          `Name each in ${__filename} (steps), and follow in tools/bench/raw-server.mjs:\n${texts.join('\n---\n')}`,
      );
    }
    return texts.map((text, i) => ({ name: step.names[i] as string, text }));
  }

  /** A request with the given X-Request-Id, which the service takes as the id of its WorkScope. */
  const get = (path: string) => (id: string) =>
    api.get(path, { key, headers: { 'x-request-id': id } }).then((r) => r.status);
  const post =
    (path: string, body: unknown, as = key) =>
    (id: string) =>
      api.post(path, { key: as, body, headers: { 'x-request-id': id } }).then((r) => r.status);
  const order = (petId: number) => post('/store/orders', { petId, quantity: 1 });
  /** A request whose statements are not kept: it warms what the bench's steady state has warm. */
  const warm = (file: string, send: (id: string) => Promise<number>, status: number): Step => ({
    file: `(warm) ${file}`,
    title: file,
    names: [],
    send: async (id) => {
      const answer = await send(id);
      sent.delete(id);
      return answer;
    },
    status,
  });

  /** The bench's requests, in the order they must run (the first order of the process, the 51st, …). */
  function steps(): Step[] {
    const plentyOrders = Array.from({ length: ORDER_ID_BLOCK - 2 }, (_, i) =>
      warm(`order ${i + 3}`, order(pets.plenty), 201),
    );
    return [
      {
        file: 'categories-new-key.sql',
        title: 'GET /categories?limit=20 with a key this instance has not verified yet (the first request of a run)',
        names: ['keyByHash', 'touchKey', 'categoriesPage'],
        send: get('/categories?limit=20'),
        status: 200,
      },
      {
        file: 'pets-by-ids.sql',
        title: 'GET /pets?ids=…',
        names: ['petsByIds'],
        send: get(`/pets?ids=${pets.plenty},${pets.last}`),
        status: 200,
      },
      {
        file: 'pet-by-id.sql',
        title: 'GET /pets/{petId}',
        names: ['petById'],
        send: get(`/pets/${pets.plenty}`),
        status: 200,
      },
      {
        file: 'pets-first-page.sql',
        title: 'GET /pets?status=available&limit=20',
        names: ['petsByStatus'],
        send: get('/pets?status=available&limit=20'),
        status: 200,
      },
      {
        file: 'pets-deep-page.sql',
        title: 'GET /pets?status=available&limit=20&cursor=… (a page deep in the list)',
        names: ['petsByStatusAfter'],
        send: get(`/pets?status=available&limit=20&cursor=${deepCursor}`),
        status: 200,
      },
      {
        file: 'inventory.sql',
        title: 'GET /store/inventory',
        names: ['inventoryPage'],
        send: get('/store/inventory'),
        status: 200,
      },
      {
        file: 'order-first.sql',
        title:
          "POST /store/orders, the process's first order: the order sequence's first block, and the first question " +
          "whether anyone subscribes to order.placed (the bench's later orders find the answer in memory)",
        names: ['lockPetAndStock', 'orderIdFirstBlock', 'stockOrderAndEvents', 'subscribersOf'],
        send: order(pets.plenty),
        status: 201,
      },
      {
        file: 'order.sql',
        title: "POST /store/orders, an order that leaves units in stock (most of the bench's)",
        names: ['lockPetAndStock', 'stockOrderAndEvents'],
        send: order(pets.plenty),
        status: 201,
      },
      ...plentyOrders,
      {
        file: 'order-next-block.sql',
        title: `POST /store/orders past the first block of ${ORDER_ID_BLOCK} order ids: the next block`,
        names: ['lockPetAndStock', 'orderIdNextBlock', 'stockOrderAndEvents'],
        send: order(pets.plenty),
        status: 201,
      },
      // The first order taking a pet's last unit asks whether anyone subscribes to its pet events; the bench's ask
      // none (the answers are in memory).
      warm('order-last-unit', order(pets.last), 201),
      {
        file: 'order-last-unit.sql',
        title: 'POST /store/orders taking the last unit: the pet becomes pending (the hot pet of the bench, at times)',
        names: ['lockPetAndStock', 'stockAndEvent', 'updatePet', 'eventsOrderAndEvent'],
        send: order(pets.lastAgain),
        status: 201,
      },
      {
        file: 'message.sql',
        title: "POST /messages: the message and its delivery job (pg-boss's own statement), in one transaction",
        names: ['insertMessage', 'insertJob'],
        send: post('/messages', { message: 'Hello' }, ADMIN_KEY),
        status: 202,
      },
    ];
  }

  const snapshots = () =>
    steps()
      .filter((step) => !step.file.startsWith('(warm)'))
      .map((step) => ({
        file: step.file,
        text: formatStatements(
          `${step.title}.\nWhat the service sends for it, in order (BEGIN and COMMIT left out), named for ` +
            `tools/bench/raw-server.mjs.\nWritten by \`npm run bench:sql\` (apps/api/test/bench-sql.e2e.spec.ts): ` +
            `do not edit.`,
          recorded.get(step.file) ?? [],
        ),
      }));

  it('has each snapshot in tools/bench/sql equal to what the service sends (npm run bench:sql writes them)', () => {
    const wanted = snapshots();
    if (WRITE) {
      const kept = new Set(wanted.map(({ file }) => file));
      for (const stale of readdirSync(SQL_DIR).filter((file) => file.endsWith('.sql') && !kept.has(file))) {
        unlinkSync(join(SQL_DIR, stale));
      }
      for (const { file, text } of wanted) writeFileSync(join(SQL_DIR, file), text);
    }
    const files = readdirSync(SQL_DIR).filter((file) => file.endsWith('.sql'));
    expect(files.sort()).toEqual(wanted.map(({ file }) => file).sort());
    for (const { file, text } of wanted) {
      expect({ file, text: readFileSync(join(SQL_DIR, file), 'utf8') }).toEqual({ file, text });
      // What the baseline reads back is what the service sent, to the byte.
      expect(parseStatements(text)).toEqual(recorded.get(file));
    }
  });

  it('gives each statement name one text, and has every statement raw-server.mjs sends', () => {
    const texts = new Map<string, Set<string>>();
    for (const { name, text } of [...recorded.values()].flat()) {
      texts.set(name, (texts.get(name) ?? new Set<string>()).add(text));
    }
    expect([...texts].filter(([, set]) => set.size > 1).map(([name]) => name)).toEqual([]);
    const used = [...readFileSync(RAW_SERVER, 'utf8').matchAll(/\bSQL\.([A-Za-z]+)/g)].map((match) => match[1]);
    expect(used.length).toBeGreaterThan(10);
    expect([...new Set(used)].filter((name) => !texts.has(name as string))).toEqual([]);
  });

  it("serves the bench's requests as the mirrored baseline, with these statements, on the same database", async () => {
    const port = await freePort();
    const raw = spawn(process.execPath, [RAW_SERVER], {
      env: { ...process.env, DATABASE_URL: api.databaseUrl, PORT: String(port), RAW_MODE: 'mirrored' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    raw.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    raw.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      while (!output.includes('ready')) {
        if (raw.exitCode !== null) throw new Error(`raw-server.mjs exited: ${output}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const base = `http://127.0.0.1:${port}`;
      const ask = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        return [`${method} ${path}`, response.status, response.status >= 300 ? await response.text() : ''];
      };
      const answers = [
        await ask('GET', '/categories?limit=20'),
        await ask('GET', `/pets?ids=${pets.plenty},${pets.forRaw}`),
        await ask('GET', `/pets/${pets.forRaw}`),
        await ask('GET', '/pets?status=available&limit=20'),
        await ask('GET', `/pets?status=available&limit=20&cursor=${deepCursor}`),
        await ask('GET', '/store/inventory'),
        await ask('POST', '/store/orders', { petId: pets.forRaw, quantity: 1 }),
        await ask('POST', '/store/orders', { petId: pets.lastForRaw, quantity: 1 }),
        await ask('POST', '/messages', { message: 'Hello from the baseline' }),
      ];
      expect(answers.filter(([, status]) => (status as number) >= 300)).toEqual([]);
      // The last unit taken the baseline's way left the pet as the service would: pending, no stock.
      expect(await store.stock(pets.lastForRaw)).toEqual({ quantity: 0, status: 'pending' });
    } finally {
      raw.kill('SIGTERM');
      if (raw.exitCode === null) await once(raw, 'exit');
    }
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
