import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { testDatabaseUrl } from '@petstore/testing';
import { Client } from 'pg';
import { ApiProcess, BUILT_MAIN, ensureBuilt, freePort } from './support/built-app';
import { releaseVersion } from '../src/release/release';

const ROOT = join(__dirname, '../../..');
const PACKAGE_VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
/** What the bundle reports: package.json's version, `+<commit>` added between releases (release.ts, releaseVersion). */
const bundledVersion = () =>
  (JSON.parse(readFileSync(join(ROOT, 'dist/apps/api/package.json'), 'utf8')) as { version: string }).version;

function withoutVariable(env: NodeJS.ProcessEnv, name: string): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => key !== name));
}

/** Which release runs, as an operator sees it; and what a release does on a database a newer one migrated. */
describe('releases (the built app, real PostgreSQL)', () => {
  beforeAll(() => ensureBuilt());

  it('says its version and commit in /health/live, the build_info metric and its first log line', async () => {
    const metricsPort = await freePort();
    const api = await ApiProcess.start({ DATABASE_URL: await testDatabaseUrl(), METRICS_PORT: String(metricsPort) });
    try {
      const live = await api.request('GET', '/health/live');
      expect(live.status).toBe(200);
      const commit = (live.body as { commit: string }).commit;
      expect(commit).toMatch(/^[0-9a-f]{40}$/);
      // Between releases, a pre-release naming its commit (issue 50: HEAD called itself the last release).
      const VERSION = releaseVersion(PACKAGE_VERSION, commit);
      if (PACKAGE_VERSION.includes('-')) expect(VERSION).toBe(`${PACKAGE_VERSION}+${commit.slice(0, 12)}`);
      expect(live.body).toEqual({ status: 'ok', version: VERSION, commit });
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toContain(
        `build_info{version="${VERSION}",commit="${commit}",node_version="${process.version}"} 1`,
      );
      // On a Node.js older than 22 (the machines' default here), one warning right after, saying why.
      const lines = api.log
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const outdated = lines.filter((line) => line['context'] === 'Runtime');
      const major = Number(process.versions.node.split('.')[0]);
      expect(outdated).toEqual(
        major < 22 ? [expect.objectContaining({ level: 'warn', msg: expect.stringMatching(/requires/) })] : [],
      );
      // Started with npm start's flags (built-app.ts): on a Node that knows the async context frame, it runs on it.
      const frame = major >= 24 || process.allowedNodeEnvironmentFlags.has('--experimental-async-context-frame');
      const first = lines[0] as { msg: string };
      expect(first.msg).toBe(
        `Petstore API ${VERSION} (commit ${commit.slice(0, 12)}) starting, on Node.js ${process.version} ` +
          `(async context: ${frame ? 'frame' : 'hooks'})`,
      );
    } finally {
      await api.stop();
    }
  });

  it('gives the pruned package.json beside the bundle (what the image installs) the same version', () => {
    // Built from some commit: between releases, package.json's version with that commit.
    const version = bundledVersion();
    expect(version.split('+')[0]).toBe(PACKAGE_VERSION);
    if (PACKAGE_VERSION.includes('-')) expect(version).toMatch(/\+[0-9a-f]{12}$/);
  });

  it('refuses to start, in one line and exit 1, on a database holding a migration it does not know', async () => {
    const url = await testDatabaseUrl();
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      // As a newer release would leave it: one more migration, not marked as served by this release.
      await client.query(
        `INSERT INTO schema_migrations ("timestamp", name) VALUES (1899999999999, 'NewerRelease1899999999999')`,
      );
      const run = spawnSync(process.execPath, [BUILT_MAIN], {
        // Without METRICS_PORT (unset: the service refuses a variable set but empty).
        env: { ...withoutVariable(process.env, 'METRICS_PORT'), DATABASE_URL: url, LOG_LEVEL: 'error', PORT: '0' },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(run.status).toBe(1);
      const lines = run.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0])).toMatchObject({
        level: 'fatal',
        context: 'Startup',
        msg:
          'Start-up failed: The database was migrated by a newer release: NewerRelease1899999999999 is a ' +
          `migration this release (${bundledVersion()}) does not know and may not serve. Run the newer release, ` +
          'or see docs/operations.md, "Rolling back".',
      });
      // Nothing was done to the database: the unknown migration is still the newest.
      const { rows } = await client.query('SELECT name FROM schema_migrations ORDER BY "timestamp" DESC LIMIT 1');
      expect(rows).toEqual([{ name: 'NewerRelease1899999999999' }]);
    } finally {
      await client.query(`DELETE FROM schema_migrations WHERE name = 'NewerRelease1899999999999'`);
      await client.end();
    }
  });
});
