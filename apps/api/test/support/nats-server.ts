import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The nats-server binary (Debian's package puts it in /usr/sbin), or why there is none. */
export function findNatsServer(): { binary: string } | { missing: string } {
  if (existsSync('/usr/sbin/nats-server')) return { binary: '/usr/sbin/nats-server' };
  try {
    return { binary: execFileSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' }).trim() };
  } catch {
    return { missing: 'no nats-server binary (apt-get install nats-server; .ci/run does it as root)' };
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => (socket.destroy(), resolve(false)));
    socket.connect(port, '127.0.0.1');
  });
}

/**
 * A NATS server with JetStream of the test's own, on a free port, its storage in a temporary directory: stopped and
 * started again on the same port and storage (a broker restart), then removed.
 */
export class NatsServer {
  private process: ChildProcess | null = null;

  private constructor(
    private readonly binary: string,
    readonly port: number,
    private readonly storeDir: string,
  ) {}

  static async start(binary: string): Promise<NatsServer> {
    const server = new NatsServer(binary, await freePort(), mkdtempSync(join(tmpdir(), 'petstore-nats-')));
    await server.restart();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts it (again, on the same port and storage) and waits until it accepts connections. */
  async restart(): Promise<void> {
    const args = ['-js', '-sd', this.storeDir, '-a', '127.0.0.1', '-p', String(this.port)];
    const child = spawn(this.binary, args, { stdio: 'ignore' });
    this.process = child;
    for (let tries = 0; !(await accepts(this.port)); tries++) {
      if (child.exitCode !== null || tries > 200) throw new Error(`nats-server did not start (${args.join(' ')})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Stops it (SIGTERM) and waits for it to exit. */
  async stop(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }

  async close(): Promise<void> {
    await this.stop();
    rmSync(this.storeDir, { recursive: true, force: true });
  }
}
