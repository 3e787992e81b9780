import { testDatabaseUrl } from '@petstore/testing';
import { AddressInfo, connect, createServer, Server, Socket } from 'node:net';
import { DEFAULT_POOL_LIMITS } from './data-source';
import { openDatabasePool } from './database-pool';

/**
 * A TCP proxy to the test server that holds each new connection's first bytes (the start-up handshake) for
 * `delayMs`: a server slow to open a session, as a just-started one, or one on a loaded host, is.
 */
async function slowProxy(targetUrl: string, delayMs: number): Promise<{ url: string; server: Server }> {
  const target = new URL(targetUrl);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pause();
    setTimeout(() => {
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    }, delayMs);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  server.on('close', () => sockets.forEach((socket) => socket.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return { url: url.toString(), server };
}

describe('openDatabasePool: start-up waits longer for its first connection than a request (real PostgreSQL)', () => {
  let url: string;

  beforeAll(async () => {
    url = await testDatabaseUrl();
  });

  it("opens on a server slower than a request's acquire timeout; later connections keep that bound", async () => {
    const { url: slow, server } = await slowProxy(url, 600);
    let pool: Awaited<ReturnType<typeof openDatabasePool>> | undefined;
    try {
      pool = await openDatabasePool(slow, { ...DEFAULT_POOL_LIMITS, acquireTimeoutMs: 200, max: 2 });
      expect(pool.totalCount).toBe(1);
      expect(pool.options.connectionTimeoutMillis).toBe(200);
      // The first connection is there, warm: a request takes it at once.
      const warm = await pool.connect();
      // A second one opens through the same slow server, with the request's 200 ms: it gives up.
      await expect(pool.connect()).rejects.toThrow(/timeout/i);
      warm.release();
    } finally {
      await pool?.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
