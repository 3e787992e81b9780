import { createHmac } from 'node:crypto';
import {
  Clock,
  CommandResult,
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
  IdempotentReplayWithheldError,
  RunIdempotently,
} from '@petstore/application';
import { resetDatabase, testDatabaseUrl } from '@petstore/testing';
import { DataSource } from 'typeorm';
import { createDataSource } from '../../database/data-source';
import { DatabasePool } from '../../database/database-pool';
import { PgUnitOfWork, TransactionHost } from '../../database/transaction-host';
import { HkdfResultSealer } from '../../security/hkdf-result-sealer';
import { IdempotencyKeyPeppers } from '../../security/idempotency-key-peppers';
import { keyHash, PgIdempotencyStore } from './pg-idempotency-store.repository';

class FixedClock extends Clock {
  constructor(public at: Date) {
    super();
  }
  now(): Date {
    return this.at;
  }
}

describe('RunIdempotently with the PostgreSQL store (real database)', () => {
  let dataSource: DataSource;
  let pool: DatabasePool;
  let host: TransactionHost;
  let store: PgIdempotencyStore;
  let clock: FixedClock;
  let run: RunIdempotently;
  let accountId: number;

  beforeAll(async () => {
    const url = await testDatabaseUrl();
    await resetDatabase(url);
    dataSource = await createDataSource(url).initialize();
    pool = new DatabasePool(url);
    host = new TransactionHost(pool);
    store = new PgIdempotencyStore(host);
    clock = new FixedClock(new Date('2026-11-21T10:00:00Z'));
    run = new RunIdempotently(new PgUnitOfWork(host), store, clock, new HkdfResultSealer());
    const rows: Array<{ id: string }> = await dataSource.query(
      `INSERT INTO accounts (name, role) VALUES ('Idem', 'customer') RETURNING id`,
    );
    accountId = Number(rows[0].id);
    await dataSource.query(`CREATE TABLE IF NOT EXISTS idem_effects (id serial PRIMARY KEY, note text)`);
  });

  afterAll(async () => {
    await dataSource.query(`DROP TABLE IF EXISTS idem_effects`);
    await pool.close();
    await dataSource.destroy();
  });

  /** A request whose effect is a row, written in the same transaction. */
  const effect = (note: string) => async (): Promise<CommandResult> => {
    const rows: Array<{ id: number }> = await host.query<{ id: number }>(
      `INSERT INTO idem_effects (note) VALUES ($1) RETURNING id`,
      [note],
    );
    // Keys in an order jsonb would change: the result must come back as the same text.
    return { json: JSON.stringify({ note, id: rows[0].id }), createdResource: `/effects/${rows[0].id}` };
  };
  const count = async (note: string) =>
    Number((await dataSource.query(`SELECT count(*) AS n FROM idem_effects WHERE note = $1`, [note]))[0].n);

  it('runs once and replays the stored response', async () => {
    const first = await run.execute({ accountId, key: 'k1', fingerprint: 'a'.repeat(64) }, effect('once'));
    const second = await run.execute({ accountId, key: 'k1', fingerprint: 'a'.repeat(64) }, effect('once'));
    expect(first.replayed).toBe(false);
    expect(second).toEqual({ replayed: true, result: first.result });
    expect(second.result.json).toBe(JSON.stringify({ note: 'once', id: JSON.parse(first.result.json).id }));
    expect(await count('once')).toBe(1);
  });

  it('refuses the key with another request', async () => {
    await run.execute({ accountId, key: 'k2', fingerprint: 'a'.repeat(64) }, effect('reused'));
    await expect(
      run.execute({ accountId, key: 'k2', fingerprint: 'b'.repeat(64) }, effect('reused')),
    ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    expect(await count('reused')).toBe(1);
  });

  it('keeps nothing when the request fails, so a retry runs it', async () => {
    const failing = async (): Promise<CommandResult> => {
      await effect('failed')();
      throw new Error('the command was refused');
    };
    await expect(run.execute({ accountId, key: 'k3', fingerprint: 'c'.repeat(64) }, failing)).rejects.toThrow(
      'refused',
    );
    expect(await count('failed')).toBe(0);
    const retried = await run.execute({ accountId, key: 'k3', fingerprint: 'c'.repeat(64) }, effect('failed'));
    expect(retried.replayed).toBe(false);
    expect(await count('failed')).toBe(1);
  });

  it('refuses a duplicate while the first is still running, without waiting', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = run.execute({ accountId, key: 'k4', fingerprint: 'd'.repeat(64) }, async () => {
      const result = await effect('slow')();
      await gate;
      return result;
    });
    // Let the first request take the lock.
    await new Promise((resolve) => setTimeout(resolve, 100));
    await expect(
      run.execute({ accountId, key: 'k4', fingerprint: 'd'.repeat(64) }, effect('slow')),
    ).rejects.toBeInstanceOf(IdempotencyKeyInUseError);
    release();
    await slow;
    expect(await count('slow')).toBe(1);
  });

  it('has exactly one effect for 20 concurrent identical requests', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        run.execute({ accountId, key: 'k5', fingerprint: 'e'.repeat(64) }, effect('race')),
      ),
    );
    expect(await count('race')).toBe(1);
    const fresh = outcomes.filter((o) => o.status === 'fulfilled' && !o.value.replayed);
    expect(fresh).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === 'rejected') expect(o.reason).toBeInstanceOf(IdempotencyKeyInUseError);
    }
  });

  it('scopes keys to the account', async () => {
    const rows: Array<{ id: string }> = await dataSource.query(
      `INSERT INTO accounts (name, role) VALUES ('Other', 'customer') RETURNING id`,
    );
    const other = Number(rows[0].id);
    await run.execute({ accountId, key: 'shared', fingerprint: 'f'.repeat(64) }, effect('scoped'));
    const theirs = await run.execute(
      { accountId: other, key: 'shared', fingerprint: 'f'.repeat(64) },
      effect('scoped'),
    );
    expect(theirs.replayed).toBe(false);
    expect(await count('scoped')).toBe(2);
  });

  it('forgets a key after 24 hours and purges expired keys', async () => {
    await run.execute({ accountId, key: 'k6', fingerprint: '1'.repeat(64) }, effect('expiring'));
    clock.at = new Date(clock.at.getTime() + 24 * 60 * 60 * 1000 + 1);
    const later = await run.execute({ accountId, key: 'k6', fingerprint: '2'.repeat(64) }, effect('expiring'));
    expect(later.replayed).toBe(false);
    expect(await count('expiring')).toBe(2);

    clock.at = new Date(clock.at.getTime() + 24 * 60 * 60 * 1000 + 1);
    const before = Number((await dataSource.query(`SELECT count(*) AS n FROM idempotency_keys`))[0].n);
    expect(before).toBeGreaterThan(0);
    expect(await store.purgeExpired(clock.now())).toBe(before);
    expect(Number((await dataSource.query(`SELECT count(*) AS n FROM idempotency_keys`))[0].n)).toBe(0);
  });
  it('keeps the key as its SHA-256 only, never as sent', async () => {
    await run.execute({ accountId, key: 'clear-key-1', fingerprint: '3'.repeat(64) }, effect('hashed'));
    const rows = await dataSource.query(`SELECT key_hash FROM idempotency_keys WHERE key_hash = $1`, [
      keyHash('clear-key-1'),
    ]);
    expect(rows).toHaveLength(1);
    const all = JSON.stringify(await dataSource.query(`SELECT * FROM idempotency_keys`));
    expect(all).not.toContain('clear-key-1');
  });

  it('keys without an owner: one space, replayed by key, 422 with another request, apart from accounts', async () => {
    const anonymous = { accountId: null, key: 'anon-1', fingerprint: '4'.repeat(64) };
    const first = await run.execute(anonymous, effect('anonymous'));
    expect(await run.execute(anonymous, effect('anonymous'))).toEqual({ replayed: true, result: first.result });
    await expect(
      run.execute({ ...anonymous, fingerprint: '5'.repeat(64) }, effect('anonymous')),
    ).rejects.toBeInstanceOf(IdempotencyKeyReusedError);
    const accounts = await run.execute({ ...anonymous, accountId }, effect('anonymous'));
    expect(accounts.replayed).toBe(false);
    expect(await count('anonymous')).toBe(2);
  });

  it('keeps a result that shows a secret sealed, and opens it for the holder of the key', async () => {
    const request = { accountId: null, key: 'sealed-key-0001', fingerprint: '6'.repeat(64), sealResult: true };
    const secret = async (): Promise<CommandResult> => ({
      json: JSON.stringify({ key: 'psk_the-secret-itself' }),
      createdResource: '/accounts/me',
    });
    const first = await run.execute(request, secret);
    expect(first.result.json).toContain('psk_the-secret-itself');
    const [row] = await dataSource.query(
      `SELECT result, result_sealed, created_resource FROM idempotency_keys WHERE key_hash = $1`,
      [keyHash('sealed-key-0001')],
    );
    expect(row).toEqual({
      result: expect.stringMatching(/^v1\./),
      result_sealed: true,
      created_resource: '/accounts/me',
    });
    expect(row.result).not.toContain('psk_the-secret-itself');
    expect(await run.execute(request, secret)).toEqual({ replayed: true, result: first.result });
  });

  it('withholds a sealed result that does not open (409), and does nothing again', async () => {
    const request = { accountId, key: 'sealed-key-0002', fingerprint: '7'.repeat(64), sealResult: true };
    await run.execute(request, effect('withheld'));
    await dataSource.query(`UPDATE idempotency_keys SET result = 'v1.AAAA' WHERE key_hash = $1`, [
      keyHash('sealed-key-0002'),
    ]);
    await expect(run.execute(request, effect('withheld'))).rejects.toBeInstanceOf(IdempotentReplayWithheldError);
    expect(await count('withheld')).toBe(1);
  });

  describe('with a pepper (IDEMPOTENCY_KEY_PEPPER)', () => {
    const OLD = 'old-pepper-7c1f0a9d3e5b8264c0e1f9a7';
    const NEW = 'new-pepper-e2a94b7d06c1f385da7e2c10';
    const running = (peppers: string[]) => {
      const keyed = new IdempotencyKeyPeppers(peppers);
      const sealer = new HkdfResultSealer(keyed);
      return new RunIdempotently(new PgUnitOfWork(host), new PgIdempotencyStore(host, keyed), clock, sealer);
    };
    const hmac = (pepper: string, key: string) => createHmac('sha256', pepper).update(key, 'utf8').digest('hex');
    const rowOf = async (hash: string) =>
      (await dataSource.query(`SELECT result FROM idempotency_keys WHERE key_hash = $1`, [hash]))[0] as
        | { result: string }
        | undefined;
    const secret = async (): Promise<CommandResult> => ({
      json: JSON.stringify({ key: 'psk_peppered-secret' }),
      createdResource: '/accounts/me/api-keys/1',
    });

    it('keeps a key as its HMAC under the pepper, never as its plain SHA-256, and seals with the pepper', async () => {
      const request = { accountId, key: 'guessable-1', fingerprint: '8'.repeat(64), sealResult: true };
      const first = await running([OLD]).execute(request, secret);
      expect(await rowOf(keyHash('guessable-1'))).toBeUndefined(); // a guessed key's SHA-256 finds nothing
      const row = await rowOf(hmac(OLD, 'guessable-1'));
      expect(row?.result).toMatch(/^v2\./);
      // Even with the row in hand and the key guessed, the seal does not open without the pepper.
      const binding = `${accountId}\n${'8'.repeat(64)}`;
      expect(new HkdfResultSealer().open(row?.result ?? '', 'guessable-1', binding)).toBeNull();
      expect(await running([OLD]).execute(request, secret)).toEqual({ replayed: true, result: first.result });
    });

    it('still replays the records kept before the pepper, and under a previous pepper after a rotation', async () => {
      const before = { accountId, key: 'kept-before', fingerprint: '9'.repeat(64), sealResult: true };
      const first = await run.execute(before, secret); // no pepper: plain SHA-256, a v1 seal
      const underOld = { accountId, key: 'kept-under-old', fingerprint: 'f'.repeat(64) };
      const old = await running([OLD]).execute(underOld, effect('rotated'));
      const rotated = running([NEW, OLD]);
      expect(await rotated.execute(before, secret)).toEqual({ replayed: true, result: first.result });
      expect(await rotated.execute(underOld, effect('rotated'))).toEqual({ replayed: true, result: old.result });
      expect(await count('rotated')).toBe(1);
      // A new record is kept under the first pepper.
      await rotated.execute({ accountId, key: 'kept-under-new', fingerprint: 'f'.repeat(64) }, effect('rotated'));
      expect(await rowOf(hmac(NEW, 'kept-under-new'))).toBeDefined();
    });
  });
});
