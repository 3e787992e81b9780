import { createServer, connect, Server, Socket } from 'node:net';

/**
 * A TCP proxy to a server (PostgreSQL, Redis) that a test can cut: `close()` stops listening and drops every
 * connection, so the service sees its dependency refuse connections (ECONNREFUSED) as when it is down, without
 * stopping the shared server; `open()` listens again on the same port. Hand-written: a few lines of node:net, which
 * no test package offers smaller.
 */
export class TcpProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly target: { host: string; port: number },
    private listenPort: number,
  ) {}

  /** A proxy on a free port of 127.0.0.1 to `target`, listening. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    const proxy = new TcpProxy(target, 0);
    await proxy.open();
    return proxy;
  }

  get port(): number {
    return this.listenPort;
  }

  async open(): Promise<void> {
    if (this.server) return;
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('error', () => undefined); // the other side's close ends both
        socket.on('close', () => {
          this.sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.listenPort, '127.0.0.1', () => resolve());
    });
    this.listenPort = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Stops listening and drops every connection: connecting now is refused. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    const closed = new Promise((resolve) => server.close(resolve));
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }
}
