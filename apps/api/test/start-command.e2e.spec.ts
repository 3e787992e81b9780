import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureBuilt } from './support/built-app';

const ROOT = join(__dirname, '../../..');

/**
 * tools/start.sh, the documented command for a supervisor (docs/operations.md, "Running the service"): its standard
 * output is the service's JSON log alone (issue 50: `npm start` printed npm's banner before it), and an empty value
 * stops start-up in one line naming the variable.
 */
describe('tools/start.sh (the built app)', () => {
  beforeAll(() => ensureBuilt());

  it('prints nothing but JSON lines: here one line naming PORT, set but empty, and exit 1', () => {
    const run = spawnSync(join(ROOT, 'tools/start.sh'), [], {
      cwd: '/', // a supervisor may start it from anywhere: it runs from the repository, as npm start does
      env: { PATH: process.env['PATH'], PORT: '', LOG_FORMAT: 'json' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.status).toBe(1);
    const lines = run.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({
      level: 'fatal',
      msg:
        'Start-up failed: Invalid configuration: PORT is set but empty: give it a value, or unset it for the ' +
        'default (3000).',
    });
  });
});
