/*
 * Backup and restore, as docs/operations.md tells an operator: a store served by this release is dumped with
 * `pg_dump --format=custom` while it runs, restored with `pg_restore` into a new database, and this release started
 * on the copy with WEBHOOKS_DELIVERY=off serves it: the same keys, pets, orders and idempotent replays, new orders,
 * and not one request to the webhook endpoint the copy holds (whose delivery was pending when the dump was taken).
 * Run by .ci/run after the build: `node -r ./tools/openapi/register.cjs tools/compat/restore.ts`. A line and exit 0
 * where no PostgreSQL, or no pg_dump of its major version or newer, can be had.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { ADMIN_KEY, createDatabase, databaseServer, dropDatabase, log, startApi } from './support';

const CURRENT_MAIN = resolve(__dirname, '../../dist/apps/api/main.js');

/** A pg_dump (with its pg_restore) able to dump a server of this major version, or null. */
function dumpTools(serverMajor: number): { dump: string; restore: string } | null {
  const dirs = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql').map((version) => `/usr/lib/postgresql/${version}/bin`)
    : [];
  for (const dir of dirs) {
    const dump = join(dir, 'pg_dump');
    if (!existsSync(dump)) continue;
    const major = Number(/(\d+)/.exec(execFileSync(dump, ['--version'], { encoding: 'utf8' }))?.[1]);
    if (major >= serverMajor) return { dump, restore: join(dir, 'pg_restore') };
  }
  return null;
}

async function main(): Promise<number> {
  if (!existsSync(CURRENT_MAIN)) throw new Error('dist/apps/api/main.js is missing: run `npm run build` first');
  const server = await databaseServer();
  if (!server) {
    log('restore: no PostgreSQL to test with (TEST_DATABASE_URL, or one on 127.0.0.1:5432): skipped');
    return 0;
  }
  const probe = new Client({ connectionString: server });
  await probe.connect();
  const serverMajor = Math.floor(
    Number((await probe.query('SHOW server_version_num')).rows[0].server_version_num) / 1e4,
  );
  await probe.end();
  const tools = dumpTools(serverMajor);
  if (!tools) {
    log(`restore: no pg_dump for PostgreSQL ${serverMajor} or newer on this machine: skipped`);
    return 0;
  }

  const receiver = await startReceiver();
  const source = `petstore_restore_src_test_${process.pid}`;
  const copy = `petstore_restore_copy_test_${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'petstore-restore-'));
  const failures: string[] = [];
  try {
    const sourceUrl = await createDatabase(server, source);
    // The source: a store with a customer, an order, and a webhook endpoint whose delivery keeps failing, so that
    // it is pending when the dump is taken, its next attempt due 5 s after the first: while the copy runs.
    receiver.status = 500;
    const live = await startApi(CURRENT_MAIN, sourceUrl, {
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      WEBHOOK_RETRY_DELAYS_MS: '5000,60000',
    });
    const call = callFor(live.baseUrl);
    const signUp = await call('POST', '/accounts', undefined, { name: 'Restored customer' });
    const customer = (signUp.body['apiKey'] as { key: string }).key;
    const category = await call('POST', '/categories', ADMIN_KEY, { name: 'Restored kind' });
    const pet = await call('POST', '/pets', ADMIN_KEY, { name: 'Restored Rex', categoryId: category.body['id'] });
    const petId = pet.body['id'] as number;
    await call('PUT', `/store/inventory/${petId}`, ADMIN_KEY, { quantity: 5 });
    const hook = await call('POST', '/webhooks/endpoints', customer, {
      url: `${receiver.url}/hook`,
      events: ['order.placed'],
    });
    const order = await call(
      'POST',
      '/store/orders',
      customer,
      { petId, quantity: 1 },
      { 'idempotency-key': 'restore-1' },
    );
    const ordered = Date.now();
    for (let i = 0; i < 100 && receiver.count === 0; i++) await new Promise((r) => setTimeout(r, 100));
    if (receiver.count === 0) failures.push('the source never tried to deliver the order.placed event');
    log(`restore: source served (order ${String(order.body['id'])}, endpoint ${String(hook.body['id'])}); dumping`);

    const file = join(dir, 'petstore.dump');
    execFileSync(tools.dump, ['--format=custom', `--file=${file}`, sourceUrl], { stdio: 'pipe' });
    await live.stop();
    const copyUrl = await createDatabase(server, copy);
    execFileSync(tools.restore, ['--no-owner', `--dbname=${copyUrl}`, file], { stdio: 'pipe' });

    // The copy, as the docs say to start one: it serves, and sends nothing to the customer's endpoint.
    receiver.status = 200;
    const before = receiver.count;
    const restored = await startApi(CURRENT_MAIN, copyUrl, {
      WEBHOOKS_DELIVERY: process.env['RESTORE_CHECK_DELIVERY'] ?? 'off', // 'on': shows the check can fail
      WEBHOOKS_ALLOW_PRIVATE: 'true',
    });
    try {
      const on = callFor(restored.baseUrl);
      const expectStatus = async (what: string, got: Promise<Answer>, status: number) => {
        const answer = await got;
        if (answer.status !== status) failures.push(`${what}: ${answer.status}, not ${status}`);
        return answer;
      };
      await expectStatus('the customer key on the copy', on('GET', '/accounts/me', customer), 200);
      const read = await expectStatus(
        'the order on the copy',
        on('GET', `/store/orders/${String(order.body['id'])}`, customer),
        200,
      );
      if (read.body['status'] !== 'placed') failures.push(`the order on the copy is ${String(read.body['status'])}`);
      const replay = await expectStatus(
        'the idempotent replay on the copy',
        on('POST', '/store/orders', customer, { petId, quantity: 1 }, { 'idempotency-key': 'restore-1' }),
        201,
      );
      if (replay.body['id'] !== order.body['id']) failures.push('the replay on the copy made a new order');
      const stock = await expectStatus('the stock on the copy', on('GET', `/store/inventory/${petId}`, customer), 200);
      if (stock.body['quantity'] !== 4) failures.push(`the copy has ${String(stock.body['quantity'])} units, not 4`);
      await expectStatus('a new order on the copy', on('POST', '/store/orders', customer, { petId, quantity: 1 }), 201);
      // Past the pending delivery's next attempt, and the new order's fan-out: a copy that delivered would have.
      await new Promise((r) => setTimeout(r, Math.max(3000, ordered + 9000 - Date.now())));
      log(`restore: the endpoint had ${before} request(s) before the copy started, ${receiver.count} after`);
      if (receiver.count !== before)
        failures.push(`the copy sent ${receiver.count - before} request(s) to the endpoint`);
      if (!restored.output().includes('WEBHOOKS_DELIVERY=off'))
        failures.push('the copy did not log that it holds deliveries');
    } finally {
      if (process.env['RESTORE_CHECK_DEBUG']) log(restored.output());
      await restored.stop();
    }
  } finally {
    receiver.server.close();
    rmSync(dir, { recursive: true, force: true });
    await dropDatabase(server, source);
    await dropDatabase(server, copy);
  }
  for (const failure of failures) log(`restore FAILED: ${failure}`);
  if (!failures.length) log('restore: a dump restored into a new database serves, and delivers no webhook');
  return failures.length ? 1 : 0;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

function callFor(baseUrl: string) {
  return async (
    method: string,
    path: string,
    key?: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
}

async function startReceiver(): Promise<{ server: Server; url: string; count: number; status: number }> {
  const state = { server: undefined as unknown as Server, url: '', count: 0, status: 200 };
  state.server = createServer((request: IncomingMessage, response) => {
    request.resume();
    request.on('end', () => {
      state.count++;
      response.writeHead(state.status).end();
    });
  });
  await new Promise<void>((r) => state.server.listen(0, '127.0.0.1', () => r()));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
