import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { allSettings } from '../src/config/app-config';

/**
 * The properties docker/compose.yaml and docker/Dockerfile must keep (issue 36, item 10); no container engine runs
 * here, so the files themselves are read (tools/check-bundle.sh proves what the image's runtime stage runs).
 */
const root = join(__dirname, '..', '..', '..');
const compose = parse(readFileSync(join(root, 'docker/compose.yaml'), 'utf8'), { merge: true });
const dockerfile = readFileSync(join(root, 'docker/Dockerfile'), 'utf8');

type Service = Record<string, any>;
const services = compose.services as Record<string, Service>;
/** The services that run the image: the migrations step, the API replicas, the worker. */
const OURS = ['migrate', 'api', 'worker'];
const SECRET_VARIABLES = allSettings()
  .filter(({ setting }) => setting.file)
  .map(({ setting }) => setting.variable);

function seconds(duration: string): number {
  const match = /^(\d+)(s|m)$/.exec(duration);
  if (!match) throw new Error(`unreadable duration ${duration}`);
  return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
}

function megabytes(size: string): number {
  const match = /^(\d+(?:\.\d+)?)([MG])$/i.exec(size);
  if (!match) throw new Error(`unreadable size ${size}`);
  return Number(match[1]) * (match[2].toUpperCase() === 'G' ? 1024 : 1);
}

describe('docker/compose.yaml', () => {
  it("runs the image tagged with the release's version, with its commit passed to the build, and node's flags", () => {
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    for (const name of OURS) {
      expect(services[name].image).toBe(`petstore-api:${version}`);
      expect(services[name].build.args.PETSTORE_COMMIT).toBeDefined();
      // The image's CMD has the flags; a service that replaces the command keeps them (docs/operations.md, "Memory"
      // and "Async context").
      if (services[name].command) {
        expect(services[name].command).toEqual(
          expect.arrayContaining(['--no-allocation-site-pretenuring', '--experimental-async-context-frame']),
        );
      }
    }
    expect(dockerfile).toMatch(/^ARG PETSTORE_COMMIT=/m);
    expect(dockerfile).toContain(`-t petstore-api:${version} .`);
  });

  it('runs the migrations step, two API replicas and a worker (--worker-only) beside PostgreSQL and Redis', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'migrate', 'postgres', 'redis', 'worker']);
    expect(services['api'].deploy.replicas).toBe(2);
    expect(services['worker'].command).toContain('--worker-only');
    expect(services['migrate'].command).toContain('--migrate-only');
  });

  it.each(OURS)(
    '%s: read-only with a tmpfs, no capability, no new privileges, logs rotated, memory bounded',
    (name) => {
      const service = services[name];
      expect(service).toMatchObject({
        read_only: true,
        cap_drop: ['ALL'],
        security_opt: ['no-new-privileges:true'],
        logging: { driver: 'json-file', options: { 'max-size': expect.any(String), 'max-file': expect.any(String) } },
      });
      expect(service.tmpfs).toContain('/tmp');
      // The 1 GB heap ceiling of the image (NODE_OPTIONS) needs about 1.5 GB: the kernel must not kill first.
      expect(megabytes(service.deploy.resources.limits.memory)).toBeGreaterThanOrEqual(1536);
    },
  );

  it.each(['api', 'worker'])('%s: a stop grace well over the 10 s drain and the 5 s hard exit', (name) => {
    expect(seconds(services[name].stop_grace_period)).toBeGreaterThanOrEqual(25);
  });

  it('gives no secret as a plain environment variable: each comes from a file under /run/secrets', () => {
    for (const [name, service] of Object.entries(services)) {
      const environment = (service.environment ?? {}) as Record<string, string>;
      for (const variable of [...SECRET_VARIABLES, 'POSTGRES_PASSWORD']) {
        // REDIS_URL may stay plain while it holds no password (the compose network's Redis has none).
        if (variable === 'REDIS_URL' && environment[variable] && !environment[variable].includes('@')) continue;
        expect({ name, variable, set: variable in environment }).toEqual({ name, variable, set: false });
      }
      for (const [variable, value] of Object.entries(environment)) {
        if (!variable.endsWith('_FILE')) continue;
        const secret = /^\/run\/secrets\/([\w-]+)$/.exec(value)?.[1];
        expect({ name, variable, secret }).toEqual({ name, variable, secret: expect.any(String) });
        expect(service.secrets).toContain(secret);
        expect(compose.secrets).toHaveProperty([secret!, 'file']);
        if (name !== 'postgres') expect(SECRET_VARIABLES).toContain(variable.replace(/_FILE$/, ''));
      }
    }
  });

  it('gives the migrations step only what it needs: the database', () => {
    expect(services['migrate'].environment).toEqual({ DATABASE_URL_FILE: '/run/secrets/database_url' });
    expect(services['migrate'].secrets).toEqual(['database_url']);
  });

  it('serves metrics on a port of their own, and keeps its Redis keys under a prefix of its own', () => {
    for (const name of ['api', 'worker']) expect(services[name].environment.METRICS_PORT).toMatch(/^\d+$/);
    expect(services['api'].environment.METRICS_PORT).not.toBe('3000');
    expect(services['api'].environment.REDIS_KEY_PREFIX).toBeTruthy();
  });
});

describe('docker/Dockerfile', () => {
  it("runs no install script of a production dependency; opts out of @scarf/scarf's analytics", () => {
    expect(dockerfile).toMatch(/^RUN cd dist\/apps\/api && npm install --omit=dev --ignore-scripts /m);
    const stages = dockerfile.split(/^FROM /m).slice(1);
    expect(stages).toHaveLength(2);
    for (const stage of stages) expect(stage).toMatch(/^ENV .*SCARF_ANALYTICS=false/m);
  });
});
