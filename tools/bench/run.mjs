// Benchmark: starts the built service (`npm run build` first; `npm run bench` does both)
// on loopback, seeds data through the API, and measures a few operations with
// autocannon for a bounded time each. Uses DATABASE_URL if set, else an embedded
// PostgreSQL in a temporary directory. Traffic goes to 127.0.0.1 only.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);

const port = await new Promise((resolve) => {
  const server = createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    server.close(() => resolve(port));
  });
});
const adminKey = `bench-admin-${randomBytes(16).toString('hex')}`;
const dataDir = process.env.DATABASE_URL ? null : mkdtempSync(join(tmpdir(), 'petstore-bench-'));
if (dataDir) chmodSync(dataDir, 0o755);
const base = `http://127.0.0.1:${port}`;

const service = spawn(process.execPath, ['dist/apps/api/main.js'], {
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', ADMIN_API_KEY: adminKey, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: 'warn', ...(dataDir ? { DATA_DIR: dataDir } : {}) },
  stdio: ['ignore', 'inherit', 'inherit'],
});

async function api(method, path, body) {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

try {
  const deadline = Date.now() + 60_000;
  while (!(await fetch(`${base}/health/ready`).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline || service.exitCode !== null) throw new Error('the service did not become ready');
    await new Promise((r) => setTimeout(r, 250));
  }

  const category = await api('POST', '/categories', { name: `Bench ${randomBytes(4).toString('hex')}` });
  const hasPets = (await api('GET', '/pets?limit=1')).status === 200;
  const petIds = [];
  if (hasPets) {
    for (let i = 0; i < 200; i++) {
      const pet = await api('POST', '/pets', { name: `Pet ${i}`, categoryId: category.body.id, status: i % 3 === 0 ? 'pending' : 'available' });
      petIds.push(pet.body.id);
    }
  }
  const hasStore = hasPets && (await api('GET', '/store/inventory?limit=1')).status === 200;
  if (hasStore) await api('PUT', `/store/inventory/${petIds[1]}`, { quantity: 1_000_000 });

  const scenarios = [
    { name: 'GET /health/ready', path: '/health/ready' },
    { name: 'GET /categories (auth + list)', path: '/categories?limit=20' },
    ...(hasPets
      ? [
          { name: 'GET /pets?status=available&name=pet 1', path: '/pets?status=available&name=pet%201&limit=20' },
          { name: `GET /pets?categoryId=${category.body.id}`, path: `/pets?categoryId=${category.body.id}&limit=100` },
        ]
      : []),
    ...(hasStore
      ? [{ name: 'POST /store/orders (1 unit, row-locked stock)', path: '/store/orders', method: 'POST', body: JSON.stringify({ petId: petIds[1], quantity: 1 }) }]
      : []),
  ];

  console.log(`\nPetstore benchmark: ${CONNECTIONS} connections, ${SECONDS} s each, on 127.0.0.1 (${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL'})\n`);
  console.log('scenario'.padEnd(52), 'req/s'.padStart(9), 'p50 ms'.padStart(8), 'p99 ms'.padStart(8), 'non-2xx'.padStart(8));
  for (const s of scenarios) {
    const result = await autocannon({
      url: base + s.path,
      method: s.method ?? 'GET',
      body: s.body,
      connections: CONNECTIONS,
      duration: SECONDS,
      headers: { authorization: `Bearer ${adminKey}`, ...(s.body ? { 'content-type': 'application/json' } : {}) },
    });
    console.log(
      s.name.padEnd(52),
      result.requests.average.toFixed(0).padStart(9),
      String(result.latency.p50).padStart(8),
      String(result.latency.p99).padStart(8),
      String(result.non2xx).padStart(8),
    );
  }
} finally {
  service.kill('SIGTERM');
  await new Promise((r) => service.once('exit', r));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
}
