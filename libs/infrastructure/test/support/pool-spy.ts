import type { Pool, PoolClient } from 'pg';

/**
 * The pg client the next checkout from the pool hands out (TransactionHost takes one per transaction): a spy on the
 * pool's `connect`, which lets it do its work and takes itself off after one call.
 */
export function nextClient(pool: Pool): Promise<PoolClient> {
  const connect = pool.connect;
  return new Promise((resolve, reject) => {
    pool.connect = (async () => {
      pool.connect = connect;
      try {
        const client = await (connect as () => Promise<PoolClient>).call(pool);
        resolve(client);
        return client;
      } catch (error) {
        reject(error);
        throw error;
      }
    }) as unknown as Pool['connect'];
  });
}

/** What a pg client is sent from now on: each query's text, and how many writes reach its socket. */
export function spyOnClient(client: PoolClient): { texts: string[]; socketWrites: () => number; restore: () => void } {
  const texts: string[] = [];
  const query = client.query;
  client.query = function (this: unknown, ...args: unknown[]) {
    texts.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: string })?.text));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as PoolClient['query'];
  // Writable's own hooks (net.Socket implements both): one call per flush, however many chunks were corked.
  const stream = (client as unknown as { connection: { stream: Writes } }).connection.stream;
  const write = stream._write;
  const writev = stream._writev;
  let writes = 0;
  stream._write = function (this: unknown, ...args: unknown[]) {
    writes++;
    return write.apply(this, args);
  };
  stream._writev = function (this: unknown, ...args: unknown[]) {
    writes++;
    return writev.apply(this, args);
  };
  return {
    texts,
    socketWrites: () => writes,
    restore: () => {
      client.query = query;
      stream._write = write;
      stream._writev = writev;
    },
  };
}

interface Writes {
  _write: (...args: unknown[]) => unknown;
  _writev: (...args: unknown[]) => unknown;
}
