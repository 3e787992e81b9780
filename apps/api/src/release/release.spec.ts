import { asyncContextMode, describeRelease, releaseOfWorkspace, releaseVersion, runtimeWarning } from './release';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

describe('release', () => {
  it("reads the workspace's version and HEAD commit (tests and ts-node; the bundle carries its own)", () => {
    const release = releaseOfWorkspace(join(__dirname, '../../../..'));
    expect(release.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(release.commit).toMatch(/^([0-9a-f]{40}|unknown)$/);
    expect(describeRelease({ version: '1.2.3', commit: '0123456789abcdef0123' })).toBe('1.2.3 (commit 0123456789ab)');
  });

  it('adds the commit to a pre-release version as build metadata, not to a release, nor when it is unknown', () => {
    const commit = '0123456789abcdef0123456789abcdef01234567';
    expect(releaseVersion('1.2.0-dev', commit)).toBe('1.2.0-dev+0123456789ab');
    expect(releaseVersion('1.2.0', commit)).toBe('1.2.0');
    expect(releaseVersion('1.2.0-dev', 'unknown')).toBe('1.2.0-dev');
    expect(releaseVersion('1.2.0-dev+0123456789ab', commit)).toBe('1.2.0-dev+0123456789ab');
    const root = join(__dirname, '../../../..');
    const workspace = releaseOfWorkspace(root);
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect(workspace.version).toBe(releaseVersion(version, workspace.commit));
  });

  it('warns, in one line, on a Node.js older than 22; says nothing on 22 or later', () => {
    expect(runtimeWarning('v20.20.2')).toBe(
      'Node.js v20.20.2 is older than 22, which this release requires (engines.node): it is past its end of life ' +
        '(no security fixes) and measurably slower for this service; run Node.js 22 LTS',
    );
    expect(runtimeWarning('v18.0.0')).toMatch(/^Node\.js v18\.0\.0 is older than 22/);
    expect(runtimeWarning('v22.11.0')).toBeNull();
    expect(runtimeWarning('v24.1.0')).toBeNull();
  });

  it('tells how the request scope is carried: the frame where the flags or Node version give it, else hooks', () => {
    const flag = '--experimental-async-context-frame';
    expect(asyncContextMode('v22.23.3', [], '')).toBe('hooks');
    expect(asyncContextMode('v22.23.3', ['--max-old-space-size=1024', flag], '')).toBe('frame');
    expect(asyncContextMode('v22.23.3', [], `--max-old-space-size=512 ${flag}`)).toBe('frame');
    expect(asyncContextMode('v22.23.3', [flag], '--no-experimental-async-context-frame')).toBe('hooks');
    expect(asyncContextMode('v20.20.2', [flag], '')).toBe('hooks');
    expect(asyncContextMode('v24.1.0', [], '')).toBe('frame');
    expect(asyncContextMode('v24.1.0', ['--no-experimental-async-context-frame'], '')).toBe('hooks');
  });
});
