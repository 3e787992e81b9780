// The Node.js flags the service runs with in production, for the Node that runs this script: `npm start` and
// `npm run worker` are `exec node $(node tools/node-flags.mjs) dist/apps/api/main.js`, so that they start on any Node
// the README allows (the image's CMD and compose's commands spell the same flags out for the image's Node 22;
// apps/api/test/node-flags.spec.ts holds them together). Printed on one line, or, imported, `nodeFlags()`.
//
// - `--max-old-space-size=1024`, `--no-allocation-site-pretenuring`: docs/operations.md, "Memory".
// - `--experimental-async-context-frame` (Node 22.7 and later; Node 24 does it without the flag): AsyncLocalStorage
//   kept in V8's context of each continuation instead of by promise hooks, which otherwise run on every promise the
//   service makes (a request makes hundreds: Nest, Fastify, pg) to carry the request's scope (the access log's, the
//   database session's, the replica choice's). One A/B on the same build, both orders, eight rounds each: 7–24 % less
//   CPU per read (docs/operations.md, "Async context"). Node 20 does not know the flag and refuses to start with it,
//   so it is given only where this Node allows it.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BASE_FLAGS = ['--max-old-space-size=1024', '--no-allocation-site-pretenuring'];
export const ASYNC_CONTEXT_FRAME = '--experimental-async-context-frame';

/**
 * The flags for a Node whose NODE_OPTIONS allows `allowed` (process.allowedNodeEnvironmentFlags, which lists the
 * async-context-frame flag wherever that Node knows it).
 */
export function nodeFlags(allowed = process.allowedNodeEnvironmentFlags) {
  return allowed.has(ASYNC_CONTEXT_FRAME) ? [...BASE_FLAGS, ASYNC_CONTEXT_FRAME] : [...BASE_FLAGS];
}

/** The flags for another Node binary (the bench's Node 22): what this script prints when that binary runs it. */
export function nodeFlagsOf(node) {
  const run = spawnSync(node, [fileURLToPath(import.meta.url)], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${node} ${fileURLToPath(import.meta.url)}: ${run.stderr || run.status}`);
  return run.stdout.trim().split(' ').filter(Boolean);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.stdout.write(nodeFlags().join(' '));
