import type { AppConfig } from '../config/app-config';

/**
 * What a process runs. `http`: the API; `worker`: the message and webhook workers; `scheduler`: the
 * scheduled jobs (once across instances); `seed`: the demo catalogue; `migrate`: the pending migrations.
 */
export type Role = 'http' | 'worker' | 'scheduler' | 'seed' | 'migrate';

/** The roles of a process, as the slices are composed for them (assembly.ts). */
export class Roles {
  private readonly roles: ReadonlySet<Role>;

  constructor(roles: Iterable<Role>) {
    this.roles = new Set(roles);
  }

  has(role: Role): boolean {
    return this.roles.has(role);
  }

  /** The job queue supervises (maintenance, cron) where jobs are worked. */
  get worksJobs(): boolean {
    return this.has('worker') || this.has('scheduler');
  }

  toString(): string {
    return [...this.roles].join(', ');
  }
}

/**
 * The roles of the API process (main.js, and createApp in the tests): HTTP, and with MESSAGE_WORKER (the only
 * place that reads it) the workers and the scheduled jobs.
 */
export function apiRoles(config: AppConfig): Roles {
  return new Roles(config.messaging.worker ? ['http', 'worker', 'scheduler'] : ['http']);
}

/** The roles `main.js` runs, from its command line: `--migrate-only`, `--seed`, `--worker-only`, or the API. */
export function rolesOf(argv: readonly string[], config: AppConfig): Roles {
  if (argv.includes('--migrate-only')) return new Roles(['migrate']);
  if (argv.includes('--seed')) return new Roles(['migrate', 'seed']);
  if (argv.includes('--worker-only')) return new Roles(['migrate', 'worker', 'scheduler']);
  return new Roles(['migrate', ...(apiRoles(config).has('worker') ? ['worker', 'scheduler'] : []), 'http'] as Role[]);
}
