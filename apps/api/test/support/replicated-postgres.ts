import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chmod, chown, cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server, type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { embeddedPostgresNativeDir, ensureOsUser, type OsUser, reachableNativeDir } from '@petstore/embedded-postgres';
import { Client } from 'pg';

const run = promisify(execFile);

/**
 * Two PostgreSQL clusters with streaming replication, from the binaries of the embedded PostgreSQL package (initdb,
 * pg_ctl, postgres): a primary and a hot standby made from a clean copy of it (no pg_basebackup needed), replicating
 * synchronously by default (`synchronous_standby_names = '*'`: a COMMIT is acknowledged once the standby has flushed
 * it, so a promoted standby has every acknowledged transaction), or asynchronously (`{ synchronous: false }`: the read
 * replica tests, whose standby is paused and stopped). For the failover tests: `promote`, `crash`, and a TCP
 * proxy (`FailoverEndpoint`) as the one endpoint in front of whichever is primary. Run as root, the servers run as
 * the `postgres` OS user, as the embedded PostgreSQL does. Every process is stopped by `stop()`.
 */
export class ReplicatedPostgres {
  private constructor(
    private readonly bin: string,
    private readonly osUser: OsUser | undefined,
    readonly root: string,
    readonly primary: Cluster,
    readonly standby: Cluster,
    /** Whether a COMMIT waits for the standby (the failover tests); else the standby replays when it can. */
    private readonly synchronous: boolean,
  ) {}

  /** Why the clusters cannot be made here (binaries missing), or undefined. */
  static unavailable(): string | undefined {
    try {
      const bin = join(embeddedPostgresNativeDir(), 'bin');
      const missing = ['initdb', 'pg_ctl', 'postgres'].filter((file) => !existsSync(join(bin, file)));
      return missing.length ? `the embedded PostgreSQL package has no ${missing.join(', ')}` : undefined;
    } catch (error) {
      return (error as Error).message;
    }
  }

  /**
   * The pair's directory and settings, nothing started yet: `start` makes, starts and connects both (`database` is
   * created on the primary, and so is on the standby); `stop` stops whatever was started, even by a `start` that
   * failed or timed out.
   */
  static async create(
    database: string,
    ports: { primary: number; standby: number },
    { synchronous = true }: { synchronous?: boolean } = {},
  ): Promise<ReplicatedPostgres> {
    const osUser = process.getuid?.() === 0 ? ensureOsUser('postgres') : undefined;
    let native = embeddedPostgresNativeDir();
    if (osUser) native = await reachableNativeDir(native, osUser);
    const root = await mkdtemp(join(tmpdir(), 'petstore-failover-'));
    if (osUser) await chown(root, osUser.uid, osUser.gid);
    const primary = new Cluster(join(root, 'primary'), ports.primary, database);
    const standby = new Cluster(join(root, 'standby'), ports.standby, database);
    return new ReplicatedPostgres(join(native, 'bin'), osUser, root, primary, standby, synchronous);
  }

  /**
   * A stopped primary's data directory to start pairs from: initdb, the settings, `database` created and `prepare`
   * run on it (the migrations, say). Each pair of a jest file then copies it, instead of running initdb and
   * `prepare` again (seconds of CPU each). `remove` deletes it.
   */
  static async image(database: string, prepare: (url: string) => Promise<unknown>): Promise<ClusterImage> {
    const maker = await ReplicatedPostgres.create(database, { primary: await freePort(), standby: 0 });
    try {
      await maker.initPrimary();
      await maker.pgCtl(maker.primary, 'start');
      await prepare(maker.primary.url);
      await maker.pgCtl(maker.primary, 'stop', ['-m', 'fast']);
    } catch (error) {
      await maker.stop();
      throw error;
    }
    return { dir: maker.primary.dir, remove: () => rm(maker.root, { recursive: true, force: true }) };
  }

  /** Makes both clusters and starts them, replicating: the primary from `image` if given, else from initdb. */
  async start(image?: ClusterImage): Promise<void> {
    const { primary, standby } = this;
    if (image) {
      await this.copyDataDir(image.dir, primary.dir);
      await appendFile(join(primary.dir, 'postgresql.conf'), `port = ${primary.port}\n`); // the last one holds
    } else {
      await this.initPrimary();
    }
    // From now on a COMMIT waits for the standby (set only now: without a standby, it would wait for ever).
    if (this.synchronous) await appendFile(join(primary.dir, 'postgresql.conf'), "synchronous_standby_names = '*'\n");
    await this.copyDataDir(primary.dir, standby.dir);
    await writeFile(join(standby.dir, 'standby.signal'), '');
    await appendFile(
      join(standby.dir, 'postgresql.conf'),
      [
        `port = ${standby.port}`,
        `primary_conninfo = 'host=127.0.0.1 port=${primary.port} user=postgres application_name=standby'`,
        // Once promoted it has no standby of its own to wait for.
        "synchronous_standby_names = ''",
        '',
      ].join('\n'),
    );
    if (this.osUser) await chown(join(standby.dir, 'standby.signal'), this.osUser.uid, this.osUser.gid);
    await this.pgCtl(primary, 'start');
    await this.pgCtl(standby, 'start');
    // Streaming, and synchronous: from here every acknowledged COMMIT is on the standby too.
    const deadline = Date.now() + 20_000;
    for (;;) {
      const rows = await primary.query<{ sync_state: string }>(
        "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby' AND state = 'streaming'",
      );
      if (rows[0] && (rows[0].sync_state === 'sync' || !this.synchronous)) break;
      if (Date.now() > deadline) throw new Error('the standby did not start streaming');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** initdb of the primary, its settings, and `database` created on it; left stopped (a clean stop). */
  private async initPrimary(): Promise<void> {
    const { primary } = this;
    const database = primary.database;
    await this.as('initdb', ['-D', primary.dir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
    await appendFile(
      join(primary.dir, 'postgresql.conf'),
      [
        `port = ${primary.port}`,
        "listen_addresses = '127.0.0.1'",
        "unix_socket_directories = ''",
        'wal_level = replica',
        'max_wal_senders = 5',
        'hot_standby = on',
        'fsync = off',
        'max_connections = 60',
        'wal_sender_timeout = 5s',
        'wal_receiver_status_interval = 1s',
        '',
      ].join('\n'),
    );
    await this.pgCtl(primary, 'start');
    const admin = new Client({ host: '127.0.0.1', port: primary.port, user: 'postgres', database: 'postgres' });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(database)}`);
    await admin.end();
    // A clean stop, then a copy of the data directory: the standby starts from the same point.
    await this.pgCtl(primary, 'stop', ['-m', 'fast']);
  }

  /** A copy of a stopped cluster's data directory, owned as PostgreSQL requires. */
  private async copyDataDir(from: string, to: string): Promise<void> {
    await cp(from, to, { recursive: true, preserveTimestamps: true });
    if (this.osUser) await run('chown', ['-R', `${this.osUser.uid}:${this.osUser.gid}`, to]);
    await chmod(to, 0o700);
  }

  /** Promotes the standby (pg_ctl promote, waiting until it accepts writes). */
  async promote(): Promise<void> {
    await this.pgCtl(this.standby, 'promote');
  }

  /** Stops the standby (`-m immediate`: its sessions cut at once); `startStandby` starts it again. */
  async stopStandby(): Promise<void> {
    await this.pgCtl(this.standby, 'stop', ['-m', 'immediate']);
  }

  async startStandby(): Promise<void> {
    await this.pgCtl(this.standby, 'start');
  }

  /** The primary dies (`pg_ctl stop -m immediate`: no shutdown checkpoint, every session cut). */
  async crashPrimary(): Promise<void> {
    await this.pgCtl(this.primary, 'stop', ['-m', 'immediate']);
  }

  /** Stops both (immediately) and removes their directories. */
  async stop(): Promise<void> {
    for (const cluster of [this.primary, this.standby]) {
      if (existsSync(join(cluster.dir, 'postmaster.pid'))) {
        await this.pgCtl(cluster, 'stop', ['-m', 'immediate']).catch(() => undefined);
      }
    }
    await rm(this.root, { recursive: true, force: true });
  }

  private async pgCtl(cluster: Cluster, action: string, extra: string[] = []): Promise<void> {
    const log = join(this.root, `${cluster === this.primary ? 'primary' : 'standby'}.log`);
    await this.as('pg_ctl', ['-D', cluster.dir, '-l', log, '-w', '-t', '30', ...extra, action]);
  }

  private async as(binary: string, args: string[]): Promise<void> {
    const env = { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C', LANG: 'C' };
    try {
      await run(join(this.bin, binary), args, { env, cwd: this.root, ...(this.osUser ?? {}) });
    } catch (error) {
      const { stderr, stdout } = error as { stderr?: string; stdout?: string };
      throw new Error(`${binary} ${args.join(' ')} failed: ${stderr || stdout || (error as Error).message}`);
    }
  }
}

/** A stopped cluster's data directory to copy (ReplicatedPostgres.image). */
export interface ClusterImage {
  dir: string;
  remove(): Promise<void>;
}

/** One cluster of the pair. */
export class Cluster {
  constructor(
    readonly dir: string,
    readonly port: number,
    readonly database: string,
  ) {}

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${this.database}`;
  }

  /** One statement on a connection of its own. */
  async query<R extends Record<string, unknown> = Record<string, unknown>>(sql: string, params: unknown[] = []) {
    const client = new Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      return (await client.query<R>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }
}

/**
 * The one endpoint in front of the clusters (what a virtual IP, a DNS name or a proxy is in production): a TCP
 * proxy that sends each new connection to the current target. `switchTo` changes the target for new connections;
 * those open stay where they are (stale sessions), unless `cut` ends them.
 */
export class FailoverEndpoint {
  private target: number;
  private readonly pairs = new Set<[Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    target: number,
  ) {
    this.target = target;
  }

  static async open(target: number): Promise<FailoverEndpoint> {
    const server = createServer();
    const endpoint = new FailoverEndpoint(server, target);
    server.on('connection', (client) => endpoint.forward(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return endpoint;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  switchTo(target: number): void {
    this.target = target;
  }

  /** Ends every connection open through the endpoint (a reset, as a load balancer that fails over does). */
  cut(): void {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private forward(client: Socket): void {
    const upstream = connect(this.target, '127.0.0.1');
    const pair: [Socket, Socket] = [client, upstream];
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

/** A TCP port free now on 127.0.0.1 (asked of the kernel). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
