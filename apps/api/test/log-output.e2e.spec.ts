import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabaseUrl } from '@petstore/testing';
import { ApiProcess, BUILT_MAIN, ensureBuilt } from './support/built-app';

/*
 * The process writes its log asynchronously (createRootLogger: lines logged while a write is under way leave in
 * the next one). What that must not cost: a line lost at exit, or a line torn or merged under load.
 */
describe('log output of the built app (asynchronous stdout)', () => {
  beforeAll(() => ensureBuilt());

  it('a start-up failure still writes its line before the process exits 1', () => {
    const run = spawnSync(process.execPath, [BUILT_MAIN], {
      env: { ...process.env, DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', LOG_LEVEL: 'info', PORT: '0' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines[lines.length - 1]).toMatchObject({ level: 'fatal', context: 'Startup' });
    expect(String(lines[lines.length - 1].msg)).toMatch(/^Start-up failed: .*ECONNREFUSED/);
  });

  it('under 300 concurrent requests every access line is written whole, the last ones too at SIGTERM', async () => {
    const api = await ApiProcess.start({
      DATABASE_URL: await testDatabaseUrl(),
      MESSAGE_WORKER: 'false',
      RATE_LIMIT_PER_MINUTE: '0',
      LOG_LEVEL: 'info',
    });
    const run = randomUUID();
    const requests = Array.from({ length: 300 }, (_, i) =>
      api.request('GET', '/health/live', { headers: { 'x-request-id': `${run}-${i}` } }),
    );
    expect((await Promise.all(requests)).every((response) => response.status === 200)).toBe(true);
    expect(await api.stop()).toBe(0);
    const lines = api.log
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { requestId?: string; msg?: string });
    const ours = lines.filter((line) => line.msg === 'request completed' && line.requestId?.startsWith(run));
    expect(new Set(ours.map((line) => line.requestId)).size).toBe(300);
  });

  it('listens with the backlog HTTP_LISTEN_BACKLOG sets (Node would take 511)', async () => {
    // A preload records the options of every listen() of the process (the kernel caps what `ss` would show).
    const dir = mkdtempSync(join(tmpdir(), 'petstore-listen-'));
    const seen = join(dir, 'listen.jsonl');
    const preload = join(dir, 'record-listen.cjs');
    writeFileSync(
      preload,
      `const net = require('node:net'); const fs = require('node:fs'); const listen = net.Server.prototype.listen;
       net.Server.prototype.listen = function (...args) {
         if (typeof args[0] === 'object') fs.appendFileSync(${JSON.stringify(seen)}, JSON.stringify(args[0]) + '\\n');
         return listen.apply(this, args);
       };`,
    );
    const api = await ApiProcess.start({
      DATABASE_URL: await testDatabaseUrl(),
      MESSAGE_WORKER: 'false',
      HTTP_LISTEN_BACKLOG: '1234',
      NODE_OPTIONS: `--require ${preload}`,
    });
    try {
      const calls = readFileSync(seen, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { port?: number; backlog?: number });
      expect(calls.filter((call) => call.port === Number(new URL(api.baseUrl).port))).toEqual([
        expect.objectContaining({ backlog: 1234 }),
      ]);
    } finally {
      await api.stop();
    }
  });
});
