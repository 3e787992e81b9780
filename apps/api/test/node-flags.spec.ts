import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// The heap ceiling and pretenuring off (docs/operations.md, "Memory") are not in the bundle: every way of starting the
// service passes them.
// These are the two the repository owns; tools/check-bundle.sh reads the image's value from the Dockerfile.
const root = join(__dirname, '../../..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/** The --max-old-space-size flags in a command line or a NODE_OPTIONS value. */
const heapFlags = (text: string): string[] => text.match(/--max-old-space-size=\d+/g) ?? [];

describe('the node flags of the start paths', () => {
  const start: string = JSON.parse(read('package.json')).scripts.start;
  const imageOptions = /^ENV .*\bNODE_OPTIONS=(\S+)/m.exec(read('docker/Dockerfile'))?.[1] ?? '';

  it('npm start runs the bundle with a heap ceiling, without allocation-site pretenuring', () => {
    expect(start).toMatch(
      /exec node --max-old-space-size=\d+ --no-allocation-site-pretenuring dist\/apps\/api\/main\.js$/,
    );
  });

  it('the image turns pretenuring off on its command line (NODE_OPTIONS does not allow the flag)', () => {
    expect(read('docker/Dockerfile')).toMatch(
      /^CMD \["node", "--no-allocation-site-pretenuring", "dist\/apps\/api\/main\.js"\]$/m,
    );
    expect(process.allowedNodeEnvironmentFlags.has('--no-allocation-site-pretenuring')).toBe(false);
  });

  it('npm run worker (--worker-only) runs with the same flags as npm start', () => {
    const worker: string = JSON.parse(read('package.json')).scripts.worker;
    expect(worker).toBe(start.replace(/main\.js$/, 'main.js --worker-only'));
  });

  it('npx nx serve api (development) runs with both flags too', () => {
    const serve = JSON.parse(read('apps/api/project.json')).targets.serve.options.runtimeArgs as string[];
    expect(serve).toContain('--no-allocation-site-pretenuring');
    expect(serve.flatMap(heapFlags)).toEqual(heapFlags(start));
  });

  it('the image sets the same ceiling in NODE_OPTIONS', () => {
    expect(heapFlags(imageOptions)).toEqual(heapFlags(start));
    expect(heapFlags(start)).toHaveLength(1);
  });

  it('leaves V8 room above the ~40 MB live heap and makes it collect well before 4x it', () => {
    const megabytes = Number(heapFlags(start)[0]?.split('=')[1]);
    expect(megabytes).toBeGreaterThanOrEqual(512);
    expect(megabytes).toBeLessThanOrEqual(1024);
  });
});
