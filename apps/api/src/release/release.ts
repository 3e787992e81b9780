import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Which release this process runs: the version of CHANGELOG.md and package.json, and the commit it was built from. */
export interface Release {
  /** Semantic version: package.json's, with `+<commit>` when that is a pre-release (`releaseVersion`). */
  version: string;
  /** The git commit the bundle was built from (40 hex digits), or `unknown` (built outside a git checkout). */
  commit: string;
}

// Set by webpack's DefinePlugin when the bundle is built (apps/api/webpack.config.js): the bundle carries no
// package.json of the workspace and no .git beside it, in the image least of all.
declare const __PETSTORE_RELEASE__: Release | undefined;

/**
 * The release, once per process: from the bundle when built, else (tests, ts-node) from the workspace's
 * package.json and git, read once here.
 */
export const RELEASE: Release =
  typeof __PETSTORE_RELEASE__ !== 'undefined'
    ? __PETSTORE_RELEASE__
    : releaseOfWorkspace(join(__dirname, '../../../..'));

/**
 * The version a build reports (docs/operations.md, "Versions"): package.json's `version` is the next release with the
 * pre-release tag `dev` between releases (`1.2.0-dev`, while CHANGELOG.md has an `[Unreleased]` section), and the
 * release itself (`1.2.0`) only in the commit tagged `v1.2.0`. A pre-release build adds its commit as semver build
 * metadata, `1.2.0-dev+0123456789ab` (12 hex digits, as the log line shows it), when the commit is known; a release
 * is its version alone. apps/api/webpack.config.js applies the same rule to the bundle.
 */
export function releaseVersion(version: string, commit: string): string {
  if (!version.includes('-') || version.includes('+') || !/^[0-9a-f]{12,40}$/.test(commit)) return version;
  return `${version}+${commit.slice(0, 12)}`;
}

/** The release of a source checkout: its package.json's version and its HEAD commit. */
export function releaseOfWorkspace(root: string): Release {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: 'pipe' }).trim();
  } catch {
    // not a git checkout: the version alone says which release
  }
  return { version: releaseVersion(version, commit), commit };
}

/** `1.1.0 (commit 0123456789ab)`: for log lines. */
export function describeRelease(release: Release = RELEASE): string {
  return `${release.version} (commit ${release.commit.slice(0, 12)})`;
}

/** The oldest Node.js major version this release supports (package.json `engines.node`). */
export const REQUIRED_NODE_MAJOR = 22;

/**
 * One line for a process started on a Node.js older than the required one, else null. It warns rather than refuses:
 * the service works on Node 20 (its test suite runs there), but that line is past its end of life (no security
 * fixes) and served 5–30 % fewer requests in the benchmark (docs/operations.md, "Memory").
 */
export function runtimeWarning(nodeVersion: string = process.version): string | null {
  const major = Number(/^v?(\d+)/.exec(nodeVersion)?.[1]);
  if (!(major < REQUIRED_NODE_MAJOR)) return null;
  return (
    `Node.js ${nodeVersion} is older than ${REQUIRED_NODE_MAJOR}, which this release requires (engines.node): it is ` +
    'past its end of life (no security fixes) and measurably slower for this service; run Node.js 22 LTS'
  );
}

const FRAME_FLAG = '--experimental-async-context-frame';

/**
 * How this process carries AsyncLocalStorage (the request's scope): `frame` in V8's continuation data (Node 24's
 * default; Node 22.7+ with `--experimental-async-context-frame`, which `npm start` gives it), else `hooks` (promise
 * hooks on every promise: measurably slower, docs/operations.md, "Async context"). Read off the flags the process was
 * started with (the command line, then NODE_OPTIONS; the last one given wins, as in Node): Node tells no other way.
 */
export function asyncContextMode(
  nodeVersion: string = process.version,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env['NODE_OPTIONS'] ?? '',
): 'frame' | 'hooks' {
  const major = Number(/^v?(\d+)/.exec(nodeVersion)?.[1]);
  let frame = major >= 24;
  for (const flag of [...execArgv, ...nodeOptions.split(/\s+/)]) {
    if (flag === FRAME_FLAG) frame = major >= 22;
    if (flag === `--no-${FRAME_FLAG.slice(2)}`) frame = false;
  }
  return frame ? 'frame' : 'hooks';
}
