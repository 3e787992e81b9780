import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');

/** The client's dependencies as docs/api.md ("The typed client") names them: `its dependencies: `a` and `b``. */
function documentedDependencies(): string[] {
  const doc = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## The typed client'));
  const match = /its dependencies: ((?:`[^`]+`(?:,\s+|\s+and\s+)?)+)/.exec(section);
  if (!match) throw new Error('docs/api.md, The typed client: no "its dependencies: `…`" sentence');
  return [...match[1].matchAll(/`([^`]+)`/g)].map(([, name]) => name).sort();
}

/**
 * `npm run client:pack` (libs/client/pack.mjs), the one command the README gives to get the client: it builds and
 * packs @petstore/client alone (no nx, no server build), in seconds, into a tarball whose package.json lists exactly
 * the dependencies the docs name. Built in a folder of its own, so as not to race another test building dist/.
 */
describe('npm run client:pack', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'petstore-client-pack-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('packs the client into a tarball whose dependencies are the ones docs/api.md names', () => {
    const script = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts['client:pack'];
    expect(script).toBe('node libs/client/pack.mjs');
    const stdout = execFileSync(process.execPath, [join(ROOT, 'libs/client/pack.mjs'), scratch], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CLIENT_BUILD_DIR: join(scratch, 'build'), CLIENT_REGISTRY: '' },
    });
    const tarball = stdout.trim().split('\n').at(-1) ?? '';
    // The service's version (root package.json), whatever libs/client holds (issue 49: it said 1.0.0 beside 1.1.0).
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(tarball).toBe(join(scratch, `petstore-client-${version}.tgz`));
    expect(existsSync(tarball)).toBe(true);
    const manifest = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
    expect([manifest.name, manifest.version, manifest.private]).toEqual(['@petstore/client', version, undefined]);
    // Never published to the public registry by accident: the source folder is private, the package's registry none.
    expect(JSON.parse(readFileSync(join(ROOT, 'libs/client/package.json'), 'utf8')).private).toBe(true);
    expect(manifest.publishConfig).toEqual({ registry: 'https://npm.invalid/' });
    expect(Object.keys(manifest.dependencies).sort()).toEqual(documentedDependencies());
    expect(documentedDependencies()).toEqual(['openapi-fetch', 'standardwebhooks']);
    const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    expect(files).toEqual(
      expect.arrayContaining(['package/esm/index.js', 'package/cjs/index.d.ts', 'package/CHANGELOG.md']),
    );
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('npm run client:pack');
  }, 120_000);
});
