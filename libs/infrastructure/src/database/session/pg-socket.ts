import type { PoolClient } from 'pg';

/*
 * The one place that touches a private part of node-postgres: a client's socket (`client.connection.stream`).
 *
 * pg has a public pipeline mode (`pipeline: true` in the client's or pool's config: a query is written without
 * waiting for the answer to the one before), but no public way to send several queries in one write to the socket,
 * nor to close a client's socket without waiting for its queries (`client.end()` waits in pipeline mode). pg corks
 * the socket itself only around the messages of one query (brianc/node-postgres#3402, pg 8.14.1); batching several
 * is the open request of brianc/node-postgres#2646 ("implement pipelining mode", the batch API asked there). Until
 * one of those gives a public API, these two functions read the socket, and `pg-socket.spec.ts` fails on a real
 * client if the property moves or stops being the socket (a batch must reach the socket in one write).
 */

/** The part of a net.Socket used here. */
interface Socket {
  cork(): void;
  uncork(): void;
  destroy(): void;
}

function socketOf(client: PoolClient | object): Socket | undefined {
  return (client as { connection?: { stream?: Socket } }).connection?.stream;
}

/**
 * Runs `send` (which queues queries on a client in pipeline mode) with the client's socket corked, so that what it
 * queues leaves in one write (one packet for a small batch) rather than one per query.
 */
export function inOneWrite<T>(client: PoolClient, send: () => T): T {
  const socket = socketOf(client);
  socket?.cork();
  try {
    return send();
  } finally {
    socket?.uncork();
  }
}

/**
 * Closes the client's socket at once: for a connection whose reply timed out (still busy with the statement), which
 * the pool must not lend again. pg then reports the connection ended ('end', and 'error' to a query in flight).
 * Returns whether there was a socket to close.
 */
export function destroySocket(client: PoolClient | object): boolean {
  const socket = socketOf(client);
  socket?.destroy();
  return socket !== undefined;
}
