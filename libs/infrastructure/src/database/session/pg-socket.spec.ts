import { testDatabaseUrl } from '@petstore/testing';
import { DatabasePool } from '../database-pool';
import { destroySocket, inOneWrite } from './pg-socket';

/*
 * The assumptions pg-socket.ts makes about node-postgres's private parts, checked on a real client of a real
 * PostgreSQL: a pg release that moves or changes the socket fails here, not silently in production (where the
 * batch would go out in several writes, one round trip still, but more packets).
 */
describe("pg-socket: the client's socket, the one private part of pg the session uses (real PostgreSQL)", () => {
  let pool: DatabasePool;

  beforeAll(async () => {
    pool = new DatabasePool(await testDatabaseUrl(), undefined, { max: 2 });
  });

  afterAll(() => pool.close());

  it('a batch of pipelined queries sent by inOneWrite reaches the socket in one write, all answered', async () => {
    const client = await pool.connect();
    const socket = (client as unknown as { connection: { stream: SocketWrites } }).connection.stream;
    expect(typeof socket.cork).toBe('function');
    const writes: number[] = [];
    const write = socket._write;
    const writev = socket._writev;
    socket._write = function (this: unknown, ...args: unknown[]) {
      writes.push(1);
      return write.apply(this, args);
    };
    socket._writev = function (this: unknown, ...args: unknown[]) {
      writes.push((args[0] as unknown[]).length);
      return writev.apply(this, args);
    };
    try {
      const answers = inOneWrite(client, () => [
        client.query('BEGIN'),
        client.query({ name: 'pg_socket_one', text: 'SELECT $1::int AS n', values: [1] }),
        client.query({ text: 'SELECT $1::int AS n', values: [2] }),
        client.query('COMMIT'),
      ]);
      const results = await Promise.all(answers);
      expect(results.map((result) => result.rows[0]?.n)).toEqual([undefined, 1, 2, undefined]);
      // One call of the socket's write, carrying every message of the four queries.
      expect(writes).toHaveLength(1);
      expect(writes[0]).toBeGreaterThan(4);
    } finally {
      socket._write = write;
      socket._writev = writev;
      client.release();
    }
  });

  it('destroySocket closes the connection at once: pg reports it ended, and the pool drops it', async () => {
    const client = await pool.connect();
    const ended = new Promise<void>((resolve) => client.once('end', () => resolve()));
    client.on('error', () => undefined);
    expect(destroySocket(client)).toBe(true);
    await ended;
    client.release(new Error('closed'));
    expect(destroySocket({})).toBe(false);
  });
});

interface SocketWrites {
  cork: () => void;
  _write: (...args: unknown[]) => unknown;
  _writev: (...args: unknown[]) => unknown;
}
