/*
 * The previous release runs against the schema of this one (docs/development.md, "Migrations without downtime").
 * Run by .ci/run after the build: `node -r ./tools/openapi/register.cjs tools/compat/previous-release.ts [commit]`
 * (the commit defaults to the first word of .ci/previous-release).
 *
 * 1. Checks out the previous release's commit from history into tmp/previous-release and builds it there (with this
 *    checkout's node_modules: a release's dependencies only grow between two releases).
 * 2. Upgrade under traffic: the previous release starts before the migration and its pooled connections are warmed
 *    on every read and write path (categories, pets, stock, orders with and without Idempotency-Key, cancels,
 *    completions, messages, sign-ups, keys created and revoked, the event log, webhook deliveries to a receiver of
 *    this check); this release's `--migrate-only` migrates the same database meanwhile (it must succeed at its first
 *    start); the traffic goes on after it. Any 5xx, any answer an unchanged API would not give (a 409 for a new
 *    category name, say), an error in the previous release's log, or no webhook delivered after the migration, fails.
 *    (A migration that changes the row type of a table the previous release reads with a prepared select of every
 *    column shows here as 500s on `GET /events` and failed fan-outs.)
 * 3. The previous release's own HTTP e2e tests and medium tests (its use cases on its repositories, from the release
 *    that has them: libs/infrastructure/test/medium), run in its checkout against databases migrated first by its own
 *    migrations and then by this release's (its jest global setup is replaced, in that throwaway checkout only,
 *    by one that does both; fast-check's seed is fixed there). A migration that breaks the previous release fails
 *    them.
 *
 * Exit 0 when all holds; else 1 with what failed. A line and exit 0 where no PostgreSQL can be had.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { ADMIN_KEY, createDatabase, databaseServer, dropDatabase, log, startApi, withoutEmpty } from './support';

const ROOT = resolve(__dirname, '../..');
const CURRENT_MAIN = join(ROOT, 'dist/apps/api/main.js');
const CHECKOUT = join(ROOT, 'tmp/previous-release');
/** The previous release's log lines that fail the check: its errors (pino level 50 and up). */
const isErrorLine = (line: string): boolean => {
  try {
    return ((JSON.parse(line) as { level?: number }).level ?? 0) >= 50;
  } catch {
    return /cached plan must not change result type/.test(line);
  }
};
/**
 * Its e2e files that test no schema: they pack the client, build consumer projects, spawn processes, or
 * (database-outage) stop and restart a PostgreSQL of their own, never the migrated one; 1.0.0's version of that
 * one also races on the order a stopping server ends its sessions in (an order in flight committed once: 201 for its
 * 503), fixed in its successor's copy (e06335c, b1ee2f4).
 */
const SKIPPED_E2E = [
  'database-outage',
  'client-package',
  'quickstart-client',
  'instances',
  'node-flags',
  'log-output',
  'tracing',
  'seed',
  'webhook-event-schemas',
  'openapi-drift',
];

async function main(): Promise<number> {
  const commit = (process.argv[2] ?? readFileSync(join(ROOT, '.ci/previous-release'), 'utf8').split(/\s+/)[0]).trim();
  if (!existsSync(CURRENT_MAIN)) throw new Error('dist/apps/api/main.js is missing: run `npm run build` first');
  const server = await databaseServer();
  if (!server) {
    log('no PostgreSQL to test with (TEST_DATABASE_URL, or one on 127.0.0.1:5432): skipped');
    return 0;
  }
  if (spawnSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: ROOT }).status !== 0) {
    // A shallow clone has no history to check the release out of: said, not failed (a full clone runs it).
    log(`the previous release's commit ${commit} is not in this clone's history (shallow?): skipped`);
    return 0;
  }
  log(`previous release: ${commit}; this release: ${execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT })}`);
  const previousMain = checkOutAndBuild(commit);

  const failures: string[] = [];
  try {
    failures.push(...(await upgradeUnderTraffic(server, previousMain)));
    failures.push(...previousReleaseTests(server));
  } finally {
    // The checkout is registered with this repository's git: removed with it (its build and node_modules link too).
    execFileSync('git', ['worktree', 'remove', '--force', CHECKOUT], { cwd: ROOT, stdio: 'pipe' });
  }
  for (const failure of failures) log(`FAILED: ${failure}`);
  log(failures.length ? `${failures.length} failure(s)` : 'the previous release works on the migrated schema');
  return failures.length ? 1 : 0;
}

function checkOutAndBuild(commit: string): string {
  rmSync(CHECKOUT, { recursive: true, force: true });
  execFileSync('git', ['worktree', 'prune'], { cwd: ROOT });
  execFileSync('git', ['worktree', 'add', '--force', '--detach', CHECKOUT, commit], { cwd: ROOT, stdio: 'pipe' });
  symlinkSync(join(ROOT, 'node_modules'), join(CHECKOUT, 'node_modules'));
  log('building the previous release (nx build api in tmp/previous-release)');
  execFileSync('npx', ['nx', 'build', 'api', '--skip-nx-cache'], {
    cwd: CHECKOUT,
    env: { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_SKIP_NX_CACHE: 'true' },
    stdio: 'pipe',
  });
  return join(CHECKOUT, 'dist/apps/api/main.js');
}

interface Tally {
  byStatus: Map<string, number>;
  unexpected: string[];
}

/** What every client shares: the webhook endpoint the receiver of this check is subscribed with. */
interface Shared {
  endpointId: string;
}

/** One client's loop: the store's writes and reads, each answer checked against what the API promises. */
async function client(baseUrl: string, id: number, until: () => boolean, tally: Tally, shared: Shared): Promise<void> {
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    key: string | null = ADMIN_KEY,
  ) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key === null ? {} : { authorization: `Bearer ${key}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const label = `${method} ${path.split('?')[0].replace(/\/[0-9a-f-]*\d[0-9a-f-]*(?=\/|$)/g, '/{id}')}`;
    const counted = `${label} ${response.status}`;
    tally.byStatus.set(counted, (tally.byStatus.get(counted) ?? 0) + 1);
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const expect = (what: string, got: { status: number; body: unknown }, ...wanted: number[]) => {
    if (wanted.includes(got.status)) return true;
    tally.unexpected.push(`${what}: ${got.status} ${JSON.stringify(got.body).slice(0, 200)}`);
    return false;
  };
  // A customer of its own: a sign-up (public), then its key on the customer's paths.
  const signUp = await call('POST', '/accounts', { name: `Compat customer ${id}` }, {}, null);
  if (!expect('sign up', signUp, 201)) return;
  const customerKey = (signUp.body['apiKey'] as { key: string }).key;
  for (let round = 0; !until(); round++) {
    const tag = `${id}-${round}-${randomUUID().slice(0, 8)}`;
    const category = await call('POST', '/categories', { name: `Compat ${tag}` });
    if (!expect('create category', category, 201)) continue;
    const pet = await call('POST', '/pets', { name: `Rex ${tag}`, categoryId: category.body['id'] });
    if (!expect('create pet', pet, 201)) continue;
    const petId = pet.body['id'] as number;
    if (!expect('set stock', await call('PUT', `/store/inventory/${petId}`, { quantity: 5 }), 200)) continue;
    const keyed = await call('POST', '/store/orders', { petId, quantity: 1 }, { 'idempotency-key': `compat-${tag}` });
    if (!expect('order with Idempotency-Key', keyed, 201)) continue;
    const replay = await call('POST', '/store/orders', { petId, quantity: 1 }, { 'idempotency-key': `compat-${tag}` });
    if (expect('replayed order', replay, 201) && replay.body['id'] !== keyed.body['id']) {
      tally.unexpected.push(
        `replayed order: a new order ${String(replay.body['id'])}, not ${String(keyed.body['id'])}`,
      );
    }
    const plain = await call('POST', '/store/orders', { petId, quantity: 2 });
    if (!expect('order', plain, 201)) continue;
    expect('cancel', await call('DELETE', `/store/orders/${String(plain.body['id'])}`), 204);
    expect('complete', await call('PATCH', `/store/orders/${String(keyed.body['id'])}`, { complete: true }), 200);
    const stock = await call('GET', `/store/inventory/${petId}`);
    if (expect('read stock', stock, 200) && stock.body['quantity'] !== 4) {
      tally.unexpected.push(`stock of pet ${petId}: ${String(stock.body['quantity'])} units, not 4`);
    }
    expect(
      'rename category',
      await call('PATCH', `/categories/${String(category.body['id'])}`, { name: `Re ${tag}` }),
      200,
    );
    const message = await call('POST', '/messages', { message: `hello ${tag}` });
    if (expect('message', message, 202)) {
      expect('read message', await call('GET', `/messages/${String(message.body['id'])}`), 200);
    }
    expect('list pets', await call('GET', `/pets?categoryId=${String(category.body['id'])}`), 200);
    expect('read order', await call('GET', `/store/orders/${String(keyed.body['id'])}`), 200);
    // The event log and the webhook deliveries: the paths whose tables a migration may widen.
    const events = await call('GET', '/events?limit=5');
    if (expect('list events', events, 200)) {
      const listed: unknown = events.body; // a list is a JSON array
      const [first] = (Array.isArray(listed) ? listed : []) as { id: string }[];
      if (first) expect('read event', await call('GET', `/events/${first.id}`), 200);
    }
    expect('list deliveries', await call('GET', `/webhooks/endpoints/${shared.endpointId}/deliveries`), 200);
    expect('read endpoint', await call('GET', `/webhooks/endpoints/${shared.endpointId}`), 200);
    // The customer: its account, a key made and revoked, an order, its events.
    expect('read account', await call('GET', '/accounts/me', undefined, {}, customerKey), 200);
    const newKey = await call('POST', '/accounts/me/api-keys', { name: `k ${tag}` }, {}, customerKey);
    if (expect('create key', newKey, 201)) {
      const keyId = String(newKey.body['id']);
      expect('revoke key', await call('DELETE', `/accounts/me/api-keys/${keyId}`, undefined, {}, customerKey), 204);
    }
    expect('customer order', await call('POST', '/store/orders', { petId, quantity: 1 }, {}, customerKey), 201);
    expect('customer events', await call('GET', '/events?limit=5', undefined, {}, customerKey), 200);
  }
}

/** A webhook receiver on loopback: counts the deliveries it is sent, answering 204. */
async function webhookReceiver() {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received: () => received,
    close: () => new Promise<void>((resolveClose) => server.close(() => resolveClose())),
  };
}

async function upgradeUnderTraffic(server: string, previousMain: string): Promise<string[]> {
  const name = `petstore_compat_test_${process.pid}`;
  await dropDatabase(server, name);
  const url = await createDatabase(server, name);
  const failures: string[] = [];
  const receiver = await webhookReceiver();
  // Webhooks to the receiver on loopback, retried at once: the previous release's worker runs in its process.
  const api = await startApi(previousMain, url, { WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_DELAYS_MS: '100,100' });
  try {
    const tally: Tally = { byStatus: new Map(), unexpected: [] };
    const endpoint = await fetch(`${api.baseUrl}/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['order.placed', 'order.cancelled', 'order.completed'] }),
    });
    const endpointBody = (await endpoint.json()) as { id?: string };
    if (endpoint.status !== 201 || !endpointBody.id) {
      throw new Error(`the previous release refused the webhook endpoint: ${endpoint.status}`);
    }
    let stop = false;
    const shared: Shared = { endpointId: endpointBody.id };
    const clients = Array.from({ length: 6 }, (_, i) => client(api.baseUrl, i, () => stop, tally, shared));
    await new Promise((r) => setTimeout(r, 3000));
    if (!receiver.received())
      failures.push('no webhook was delivered before the migration: the traffic did not warm it');
    log('migrating with this release (--migrate-only) while the previous one serves');
    const started = Date.now();
    const migrate = spawnSync(process.execPath, [CURRENT_MAIN, '--migrate-only'], {
      env: withoutEmpty({ ...process.env, DATABASE_URL: url, LOG_LEVEL: 'info', METRICS_PORT: '', REDIS_URL: '' }),
      encoding: 'utf8',
      timeout: 300_000,
    });
    log(`migration: exit ${migrate.status} in ${Date.now() - started} ms`);
    for (const line of migrate.stdout.trim().split('\n')) {
      try {
        JSON.parse(line);
      } catch {
        failures.push(`the migration printed a line that is not JSON: ${line}`);
      }
    }
    if (migrate.status !== 0) failures.push(`this release's first start failed:\n${migrate.stdout}${migrate.stderr}`);
    const deliveredAtMigration = receiver.received();
    await new Promise((r) => setTimeout(r, 6000));
    stop = true;
    await Promise.all(clients);
    const rows = [...tally.byStatus.entries()].sort(([a], [b]) => a.localeCompare(b));
    for (const [key, count] of rows) log(`  ${key}: ${count}`);
    const count = (match: (status: number) => boolean) =>
      rows.filter(([key]) => match(Number(key.split(' ').pop()))).reduce((sum, [, n]) => sum + n, 0);
    const serverErrors = count((status) => status >= 500);
    if (serverErrors) failures.push(`the previous release answered ${serverErrors} × 5xx`);
    if (!count((status) => status === 201)) failures.push('no order or creation succeeded: the traffic did not run');
    const deliveredAfter = receiver.received() - deliveredAtMigration;
    log(`webhook deliveries received: ${deliveredAtMigration} before the migration ended, ${deliveredAfter} after`);
    if (!deliveredAfter) failures.push("the previous release's worker delivered no webhook after the migration");
    const errors = api.output().split('\n').filter(isErrorLine);
    for (const line of errors.slice(0, 5)) failures.push(`the previous release logged an error: ${line.slice(0, 400)}`);
    if (errors.length > 5) failures.push(`… and ${errors.length - 5} more error lines in its log`);
    for (const unexpected of tally.unexpected.slice(0, 20))
      failures.push(`previous release, after or during the migration: ${unexpected}`);
    if (tally.unexpected.length > 20) failures.push(`… and ${tally.unexpected.length - 20} more unexpected answers`);
  } finally {
    await api.stop();
    await receiver.close();
    if (failures.length) log(`previous release's log (last 3000 characters):\n${api.output().slice(-3000)}`);
    await dropDatabase(server, name);
  }
  return failures;
}

/** The previous release's global setup, replaced in its checkout: its migrations, then this release's. */
const GLOBAL_SETUP = `import * as path from 'node:path';
import { execFileSync } from 'node:child_process';

// Written by tools/compat/previous-release.ts of the newer release: the template database gets this release's
// migrations, then the newer release's (its built main.js --migrate-only), so these tests run on the new schema.
export default async function globalSetup(): Promise<void> {
  const { registerTsConfigPaths } = await import('@nx/js/internal');
  const unregister = registerTsConfigPaths(path.resolve(__dirname, '../../tsconfig.base.json'));
  try {
    const { acquireTestDatabaseServer } = await import('@petstore/testing');
    const { migrateDatabase } = await import('@petstore/infrastructure');
    await acquireTestDatabaseServer({
      migrate: async (url: string) => {
        await migrateDatabase(url);
        execFileSync(process.execPath, [${JSON.stringify(CURRENT_MAIN)}, '--migrate-only'], {
          // The newer release refuses a variable set but empty: these are left out, not emptied.
          env: Object.fromEntries(
            Object.entries({ ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' }).filter(
              ([name, value]) => value !== '' && name !== 'METRICS_PORT' && name !== 'REDIS_URL',
            ),
          ),
          stdio: 'inherit',
        });
      },
    });
  } finally {
    unregister();
  }
}
`;

/**
 * fast-check's seed, fixed in the previous release's checkout (its properties draw a new one per run otherwise):
 * 1.0.0's store-properties test ends by checking that its 25 random sequences met every outcome, and now and then
 * they drew no successful cancel and failed on chance, not on the schema (this release's copy runs a covering
 * sequence first). A previous release is a fixed thing to check against; its random inputs may as well be too.
 * This seed's sequences meet every outcome that test checks (its run on 1.0.0 passed; a newer fast-check may draw
 * others, which would then fail every run, not one in many).
 */
const FAST_CHECK_SEED = 20261128;

/** The previous release's jest preset, wrapped in its checkout: the same, plus the fixed fast-check seed. */
function fixFastCheckSeed(): void {
  const preset = join(CHECKOUT, 'jest.preset.js');
  renameSync(preset, join(CHECKOUT, 'jest.preset.previous.js'));
  writeFileSync(
    join(CHECKOUT, 'tools/jest/fast-check-seed.cjs'),
    `require('fast-check').configureGlobal({ seed: ${FAST_CHECK_SEED} });\n`,
  );
  writeFileSync(
    preset,
    `// Written by tools/compat/previous-release.ts of the newer release: the previous preset, fast-check seeded.
const preset = require('./jest.preset.previous.js');
module.exports = {
  ...preset,
  setupFilesAfterEnv: [...(preset.setupFilesAfterEnv ?? []), require.resolve('./tools/jest/fast-check-seed.cjs')],
};
`,
  );
}

function previousReleaseTests(server: string): string[] {
  writeFileSync(join(CHECKOUT, 'tools/jest/global-setup.ts'), GLOBAL_SETUP);
  fixFastCheckSeed();
  const skipped = `apps/api/test/(${SKIPPED_E2E.join('|')})\\.e2e\\.spec\\.ts`;
  log(`the previous release's e2e and medium tests on the migrated schema (skipping ${SKIPPED_E2E.join(', ')})`);
  const run = spawnSync(
    'npx',
    [
      'jest',
      '--ci',
      '--selectProjects',
      'api',
      'infrastructure',
      // The business cases moved from the e2e files to the medium tier (issue 51) run on the migrated schema too;
      // a release before the tier matches none there.
      '--testPathPatterns',
      'apps/api/test/.*\\.e2e\\.spec\\.ts$',
      'libs/infrastructure/test/medium/.*\\.medium\\.spec\\.ts$',
      '--testPathIgnorePatterns',
      skipped,
      '--maxWorkers=2',
    ],
    { cwd: CHECKOUT, env: { ...process.env, TEST_DATABASE_URL: server }, stdio: 'inherit', timeout: 900_000 },
  );
  return run.status === 0
    ? []
    : [`the previous release's e2e or medium tests failed on the migrated schema (exit ${run.status})`];
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
