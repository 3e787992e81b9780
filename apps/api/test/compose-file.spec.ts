import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse } from 'yaml';
import { allSettings, loadConfig } from '../src/config/app-config';
import { onPath } from './support/on-path';

/**
 * The properties docker/compose.yaml and docker/Dockerfile must keep (issue 36, item 10; issue 50, item 5); no
 * container engine runs here, so the files themselves are read (tools/check-bundle.sh proves what the image's
 * runtime stage runs), and docker-compose validates the compose file (below).
 */
const root = join(__dirname, '..', '..', '..');
const compose = parse(readFileSync(join(root, 'docker/compose.yaml'), 'utf8'), { merge: true });
const dockerfile = readFileSync(join(root, 'docker/Dockerfile'), 'utf8');

type Service = Record<string, any>;
const services = compose.services as Record<string, Service>;
/** The services that run the image: the migrations step, the API replicas, the worker. */
const OURS = ['migrate', 'api-1', 'api-2', 'worker'];
const APIS = ['api-1', 'api-2'];
// IDEMPOTENCY_KEY_PEPPER is a secret whatever the schema marks: issue 50 (item 4) gives it its _FILE variant.
const SECRET_VARIABLES = [
  ...new Set([
    ...allSettings()
      .filter(({ setting }) => setting.file)
      .map(({ setting }) => setting.variable),
    'IDEMPOTENCY_KEY_PEPPER',
  ]),
];

/** A value as compose interpolates it with none of its variables set: `${NAME:-default}` is `default`. */
function unset(value: string): string {
  return value.replace(/\$\{\w+:-([^}]*)\}/g, '$1');
}

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
  it("runs the image tagged PETSTORE_TAG, by default the release's version, with its commit and node's flags", () => {
    const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
    for (const name of OURS) {
      expect(services[name].image).toBe(`petstore-api:\${PETSTORE_TAG:-${version}}`);
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
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'migrate', 'postgres', 'redis', 'worker']);
    expect(services['worker'].command).toContain('--worker-only');
    expect(services['migrate'].command).toContain('--migrate-only');
  });

  it('has replicas that can be replaced one at a time: two services alike but for their port, none scaled', () => {
    const [one, two] = APIS.map((name) => services[name]);
    expect({ ...one, ports: undefined }).toEqual({ ...two, ports: undefined });
    expect(one.ports).not.toEqual(two.ports);
    for (const name of OURS) expect(services[name].deploy.replicas).toBeUndefined();
    // The documented commands (the file's header and docs/operations.md) replace each one alone.
    const text = readFileSync(join(root, 'docker/compose.yaml'), 'utf8');
    for (const name of [...APIS, 'worker']) expect(text).toContain(`up -d --no-deps ${name}`);
  });

  it('publishes ports on the loopback interface only; PostgreSQL, Redis and the metrics not at all', () => {
    const published = Object.entries(services).flatMap(([name, service]) =>
      ((service.ports ?? []) as string[]).map((port) => ({ name, port })),
    );
    expect(published.map(({ name }) => name).sort()).toEqual(APIS);
    for (const { name, port } of published) {
      expect({ name, port }).toEqual({ name, port: expect.stringMatching(/^127\.0\.0\.1:\d+:3000$/) });
    }
  });

  it('trusts the one proxy hop of the balancer it assumes (a TRUST_PROXY the service accepts)', () => {
    for (const name of APIS) {
      const value = services[name].environment.TRUST_PROXY as string;
      expect(loadConfig({ TRUST_PROXY: unset(value) }).http.trustProxy).toBe(1);
    }
  });

  it('checks liveness as the health check, never readiness (a database outage must not make them unhealthy)', () => {
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n.*\/health\/live'/m);
    expect(dockerfile).not.toMatch(/^HEALTHCHECK .*\n.*\/health\/ready/m);
    for (const [name, service] of Object.entries(services)) {
      expect({ name, healthcheck: JSON.stringify(service.healthcheck ?? null) }).not.toEqual({
        name,
        healthcheck: expect.stringContaining('/health/ready'),
      });
    }
  });

  it('gives the replicas the idempotency pepper as a secret file', () => {
    for (const name of APIS) {
      expect(services[name].environment.IDEMPOTENCY_KEY_PEPPER_FILE).toBe('/run/secrets/idempotency_key_pepper');
      expect(services[name].secrets).toContain('idempotency_key_pepper');
    }
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

  it.each([...APIS, 'worker'])('%s: a stop grace well over the 10 s drain and the 5 s hard exit', (name) => {
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
    for (const name of [...APIS, 'worker']) expect(services[name].environment.METRICS_PORT).toMatch(/^\d+$/);
    for (const name of APIS) {
      expect(services[name].environment.METRICS_PORT).not.toBe('3000');
      expect(services[name].environment.REDIS_KEY_PREFIX).toBeTruthy();
    }
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

/**
 * The file against the Compose Specification's JSON schema: Debian's docker-compose (1.29) validates it with the
 * schema it ships (compose_spec.json) in `config`, which needs no container engine. .ci/run installs it where it is
 * missing; without it this says so and skips.
 */
const DOCKER_COMPOSE = onPath('docker-compose') ?? '';
if (!DOCKER_COMPOSE) {
  console.warn(
    'compose-file: docker-compose is not installed (Debian: apt-get install docker-compose; .ci/run does), so ' +
      'the validation against the Compose Specification is skipped.',
  );
}

(DOCKER_COMPOSE ? describe : describe.skip)('docker/compose.yaml, by docker-compose config', () => {
  const config = (env: Record<string, string>) => {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !/^(PETSTORE_|REDIS_KEY)/.test(name)),
    );
    return execFileSync(DOCKER_COMPOSE, ['-f', join(root, 'docker/compose.yaml'), 'config'], {
      env: { ...clean, ...env },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  };

  it('is valid against the Compose Specification, and takes the tag and the trusted hops from the environment', () => {
    const resolved = parse(config({ PETSTORE_TAG: '9.8.7', PETSTORE_TRUST_PROXY: '2' })) as typeof compose;
    for (const name of OURS) expect(resolved.services[name].image).toBe('petstore-api:9.8.7');
    for (const name of APIS) expect(resolved.services[name].environment.TRUST_PROXY).toBe('2');
  });

  it('refuses a file that breaks the schema (the check can fail)', () => {
    const broken = join(root, 'tmp', `compose-broken-${process.pid}.yaml`);
    mkdirSync(dirname(broken), { recursive: true });
    writeFileSync(broken, 'services:\n  api:\n    image: x\n    no_such_option: 1\n');
    try {
      expect(() =>
        execFileSync(DOCKER_COMPOSE, ['-f', broken, 'config', '-q'], { stdio: ['ignore', 'pipe', 'pipe'] }),
      ).toThrow(/no_such_option/);
    } finally {
      rmSync(broken, { force: true });
    }
  });
});
