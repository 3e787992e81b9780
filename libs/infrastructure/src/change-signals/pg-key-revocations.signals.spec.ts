import { EndpointChangeSubscriber, RevocationSubscriber } from '@petstore/application';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { createDataSource } from '../database/data-source';
import { DatabasePool } from '../database/database-pool';
import { TransactionHost } from '../database/transaction-host';
import { KEY_REVOCATIONS_CHANNEL, PgKeyRevocations } from './pg-key-revocations.signals';

/** What a subscriber was told, in order; `next()` resolves at the next call. */
class Recorder implements RevocationSubscriber, EndpointChangeSubscriber {
  readonly calls: Array<string[] | 'reset' | 'changed'> = [];
  private waiting: Array<() => void> = [];

  revoked(hashes: readonly string[]): void {
    this.record([...hashes]);
  }

  reset(): void {
    this.record('reset');
  }

  changed(): void {
    this.record('changed');
  }

  next(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private record(call: string[] | 'reset' | 'changed'): void {
    this.calls.push(call);
    const waiting = this.waiting;
    this.waiting = [];
    for (const resolve of waiting) resolve();
  }
}

const hash = (n: number) => n.toString(16).padStart(64, '0');

describe('PgKeyRevocations (real database)', () => {
  let url: string;
  let dataSource: DataSource;
  let pool: DatabasePool;
  let host: TransactionHost;
  let revocations: PgKeyRevocations;
  let subscriber: Recorder;

  beforeAll(async () => {
    url = await testDatabaseUrl();
    await resetDatabase(url);
    dataSource = await createDataSource(url).initialize();
    pool = new DatabasePool(url);
    host = new TransactionHost(pool);
  });
  afterAll(async () => {
    await pool.close();
    await dataSource.destroy();
  });

  beforeEach(async () => {
    revocations = new PgKeyRevocations(host, { url, minReconnectDelayMs: 20, maxReconnectDelayMs: 50 });
    subscriber = new Recorder();
    revocations.subscribe(subscriber);
    expect(revocations.listening).toBe(false);
    await revocations.listen();
    expect(revocations.listening).toBe(true);
    expect(subscriber.calls).toEqual(['reset']);
  });
  afterEach(() => revocations.close());

  it('hands a NOTIFY sent by another connection to the subscriber', async () => {
    const other = new Client({ connectionString: url });
    await other.connect();
    try {
      const told = subscriber.next();
      await other.query(`SELECT pg_notify($1, $2)`, [KEY_REVOCATIONS_CHANNEL, `${hash(1)},${hash(2)}`]);
      await told;
      expect(subscriber.calls).toEqual(['reset', [hash(1), hash(2)]]);
    } finally {
      await other.end();
    }
  });

  it('announces in a transaction: delivered at commit (not on rollback), in chunks under 8000 bytes', async () => {
    const many = Array.from({ length: 250 }, (_, i) => hash(i));
    await host
      .transaction(async () => {
        await revocations.announce([hash(999)]);
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    const told = subscriber.next();
    await host.transaction(() => revocations.announce(many));
    await told;
    while (subscriber.calls.flat().length < 1 + many.length) await subscriber.next();
    expect(subscriber.calls).toEqual(['reset', many.slice(0, 100), many.slice(100, 200), many.slice(200)]);
  });

  it('resets the subscriber when its connection is lost, and again once it listens on a new one', async () => {
    const killer = new Client({ connectionString: url });
    await killer.connect();
    try {
      const lost = subscriber.next();
      await killer.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'petstore-key-revocations'
           AND datname = current_database()`,
      );
      await lost;
      expect(revocations.listening).toBe(false);
      expect(subscriber.calls).toEqual(['reset', 'reset']);
      await subscriber.next(); // reconnected: reset again before listening
      expect(revocations.listening).toBe(true);
      const told = subscriber.next();
      await killer.query(`SELECT pg_notify($1, $2)`, [KEY_REVOCATIONS_CHANNEL, hash(7)]);
      await told;
      expect(subscriber.calls).toEqual(['reset', 'reset', 'reset', [hash(7)]]);
    } finally {
      await killer.end();
    }
  });

  it('carries webhook endpoint changes on the same connection: at commit, reset with the connection', async () => {
    const endpoints = new Recorder();
    revocations.endpointChanges.subscribe(endpoints);
    expect(revocations.endpointChanges.listening).toBe(true);
    await host
      .transaction(async () => {
        await revocations.endpointChanges.announce();
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    const told = endpoints.next();
    await host.transaction(() => revocations.endpointChanges.announce());
    await told;
    expect(endpoints.calls).toEqual(['changed']);
    expect(subscriber.calls).toEqual(['reset']); // the key cache is not told of endpoints
    const [{ n }] = await host.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'petstore-key-revocations'
         AND datname = current_database()`,
    );
    expect(n).toBe(1);
    const lost = endpoints.next();
    await host.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'petstore-key-revocations'
         AND datname = current_database()`,
    );
    await lost;
    expect(revocations.endpointChanges.listening).toBe(false);
    expect(endpoints.calls).toEqual(['changed', 'reset']);
  });
});

describe('PgKeyRevocations: a connection that LISTENs but does not receive (as through a transaction pooler)', () => {
  it('never counts as listening, and says so once', async () => {
    const url = await testDatabaseUrl();
    await resetDatabase(url);
    const pool = new DatabasePool(url);
    // NOTIFY reaches the sessions of its own database only: a listener on another database LISTENs without
    // error, answers every query, and never receives what this pool announces, as behind a pooler.
    const elsewhere = new URL(url);
    elsewhere.pathname = '/postgres';
    const errors: string[] = [];
    let recovered = 0;
    const deaf = new PgKeyRevocations(new TransactionHost(pool), {
      url: elsewhere.toString(),
      pingEveryMs: 50,
      timeoutMs: 100,
      minReconnectDelayMs: 20,
      maxReconnectDelayMs: 40,
      onError: (error) => errors.push(String(error)),
      onRecovered: () => recovered++,
    });
    const subscriber = new Recorder();
    deaf.subscribe(subscriber);
    try {
      await deaf.listen();
      expect(deaf.listening).toBe(false);
      await new Promise((resolve) => setTimeout(resolve, 600)); // several heartbeats and reconnections
      expect(deaf.listening).toBe(false);
      expect(errors).toHaveLength(1); // one line for the operator, not one per attempt
      expect(errors[0]).toMatch(/heartbeat notification did not arrive within 100 ms/);
      expect(subscriber.calls.every((call) => call === 'reset')).toBe(true);
      expect(recovered).toBe(0);
    } finally {
      await deaf.close();
      await pool.close();
    }
  });
});
