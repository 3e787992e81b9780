import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The heap ceiling, pretenuring off (docs/operations.md, "Memory") and, where Node has it, the async context frame
// ("Async context") are not in the bundle: every way of starting the service passes them.
// These are the two the repository owns; tools/check-bundle.sh reads the image's value from the Dockerfile.
const root = join(__dirname, '../../..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const ASYNC_CONTEXT_FRAME = '--experimental-async-context-frame';

/** What tools/node-flags.mjs prints for the Node running this test: npm start's flags on it. */
const startFlags = (): string[] =>
  execFileSync(process.execPath, [join(root, 'tools/node-flags.mjs')], { encoding: 'utf8' }).split(' ');

/** The --max-old-space-size flags in a command line or a NODE_OPTIONS value. */
const heapFlags = (text: string): string[] => text.match(/--max-old-space-size=\d+/g) ?? [];

describe('the node flags of the start paths', () => {
  const start: string = JSON.parse(read('package.json')).scripts.start;
  const imageOptions = /^ENV .*\bNODE_OPTIONS=(\S+)/m.exec(read('docker/Dockerfile'))?.[1] ?? '';

  it('npm start execs tools/start.sh, which runs the bundle with the flags tools/node-flags.mjs prints', () => {
    // exec: npm's child is then node itself, which gets the supervisor's SIGTERM and exits 0 (tools/smoke.sh).
    expect(start).toBe('exec tools/start.sh');
    expect(read('tools/start.sh')).toMatch(
      /^exec node \$\(node tools\/node-flags\.mjs\) dist\/apps\/api\/main\.js "\$@"$/m,
    );
  });

  it('those flags: a heap ceiling, pretenuring off, and the async context frame wherever this Node knows it', () => {
    const known = process.allowedNodeEnvironmentFlags.has(ASYNC_CONTEXT_FRAME);
    expect(startFlags()).toEqual([
      expect.stringMatching(/^--max-old-space-size=\d+$/),
      '--no-allocation-site-pretenuring',
      ...(known ? [ASYNC_CONTEXT_FRAME] : []),
    ]);
  });

  it('this Node starts with every flag it is given (Node 20 refuses an option it does not know)', () => {
    expect(execFileSync(process.execPath, [...startFlags(), '-p', '"started"'], { encoding: 'utf8' }).trim()).toBe(
      'started',
    );
  });

  it("the image's command: pretenuring off (NODE_OPTIONS does not allow it) and, its Node being 22, frames", () => {
    const cmd = /^CMD (\[.*\])$/m.exec(read('docker/Dockerfile'))?.[1] ?? '[]';
    expect(JSON.parse(cmd)).toEqual([
      'node',
      '--no-allocation-site-pretenuring',
      ASYNC_CONTEXT_FRAME,
      'dist/apps/api/main.js',
    ]);
    expect(read('docker/Dockerfile')).toMatch(/^FROM node:22\b.* AS runtime$/m);
    expect(process.allowedNodeEnvironmentFlags.has('--no-allocation-site-pretenuring')).toBe(false);
  });

  it('npm run worker (--worker-only) runs with the same flags as npm start', () => {
    const worker: string = JSON.parse(read('package.json')).scripts.worker;
    expect(worker).toBe(`${start} --worker-only`);
  });

  it('npx nx serve api (development) runs with the heap ceiling and pretenuring off too', () => {
    const serve = JSON.parse(read('apps/api/project.json')).targets.serve.options.runtimeArgs as string[];
    expect(serve).toContain('--no-allocation-site-pretenuring');
    expect(serve.flatMap(heapFlags)).toEqual(startFlags().flatMap(heapFlags));
    // Not the async context frame: Nx starts it on whatever Node the developer has, and Node 20 refuses the flag.
    expect(serve).not.toContain(ASYNC_CONTEXT_FRAME);
  });

  it('the image sets the same ceiling in NODE_OPTIONS', () => {
    expect(heapFlags(imageOptions)).toEqual(startFlags().flatMap(heapFlags));
    expect(startFlags().flatMap(heapFlags)).toHaveLength(1);
  });

  it('leaves V8 room above the ~40 MB live heap and makes it collect well before 4x it', () => {
    const megabytes = Number(startFlags().flatMap(heapFlags)[0]?.split('=')[1]);
    expect(megabytes).toBeGreaterThanOrEqual(512);
    expect(megabytes).toBeLessThanOrEqual(1024);
  });
});
