import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareVersions } from '@petstore/infrastructure';

const ROOT = join(__dirname, '../../../..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const versionOf = (path: string) => (JSON.parse(read(path)) as { version: string }).version;

/**
 * The version rule (docs/operations.md, "Versions"; issue 50: HEAD, with an `[Unreleased]` section, called itself
 * 1.1.0): between releases package.json says the next release with `-dev`, above every release CHANGELOG.md has;
 * in a release commit, the release CHANGELOG.md's newest section names. The client package carries the same.
 */
describe('the version of the workspace', () => {
  const changelog = read('CHANGELOG.md');
  const unreleased = /^## \[Unreleased\]\n([\s\S]*?)^## \[/m.exec(changelog)?.[1] ?? '';
  const released = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/gm)].map((match) => match[1]);
  const version = versionOf('package.json');

  it('is the next release with -dev while CHANGELOG.md has unreleased changes, else the newest release', () => {
    expect(released.length).toBeGreaterThan(0);
    if (unreleased.trim()) {
      expect(version).toMatch(/^\d+\.\d+\.\d+-dev$/);
      expect(compareVersions(version, released[0])).toBe(1);
    } else {
      expect(version).toBe(released[0]);
    }
  });

  it("is the client package's version (written into it by its build, never kept apart), and the lock file's", () => {
    // libs/client/package.json holds none: libs/client/build.mjs writes root package.json's into the built one.
    expect((JSON.parse(read('libs/client/package.json')) as { version?: string }).version).toBeUndefined();
    expect(read('libs/client/build.mjs')).toContain("readFileSync(join(root, 'package.json'), 'utf8')");
    const lock = JSON.parse(read('package-lock.json')) as {
      version: string;
      packages: Record<string, { version: string }>;
    };
    expect([lock.version, lock.packages[''].version]).toEqual([version, version]);
  });
});
