import { randomUUID } from 'node:crypto';
import type { FeedPosition, OutboxEvent } from '@petstore/application';
import { resetDatabase } from '@petstore/testing';
import { pgRepositories, useTestDatabase } from '../../../test/support/real-database';
import { settledEvents } from '../../../test/support/settled-events';
import { PgEventLog, TIME_BOUNDED_SCAN_LIMIT } from './pg-event-log.repository';
import { PgEventOutbox } from './pg-event-outbox.repository';

describe('The event log on PostgreSQL (real database)', () => {
  const db = useTestDatabase();

  describe('the feed skips no event, whatever order the writers commit in', () => {
    let log: PgEventLog;
    let outbox: PgEventOutbox;
    const event = (label: string): OutboxEvent => ({
      id: randomUUID(),
      type: 'order.placed',
      subjectOwnerId: 7,
      endpointId: null,
      body: JSON.stringify({ label }),
      createdAt: new Date(),
    });
    const labels = (items: { body: string }[]) =>
      items.map((item) => (JSON.parse(item.body) as { label: string }).label);

    beforeEach(async () => {
      await resetDatabase(db.dataSource);
      log = new PgEventLog(db.host);
      outbox = new PgEventOutbox(db.host);
    });

    /**
     * Runs a transaction that records `label`'s event, sends it (the INSERT is held until the next statement), then
     * waits for `commit` to resolve before it commits; `recorded` resolves once the row is written.
     */
    function openTransaction(label: string, commit: Promise<void>, before?: () => Promise<void>) {
      let recorded!: () => void;
      const written = new Promise<void>((resolve) => (recorded = resolve));
      const done = pgRepositories(db.host).uow.run(async () => {
        await before?.();
        await outbox.add(event(label));
        await db.host.query('SELECT 1'); // sends the held INSERT: the row exists, uncommitted
        recorded();
        await commit;
      });
      return { written, done };
    }

    async function recordCommitted(label: string): Promise<void> {
      await pgRepositories(db.host).uow.run(() => outbox.add(event(label)));
    }

    it('an event committed after a later-numbered one is still ahead of the checkpoint (repository)', async () => {
      await recordCommitted('P0');
      await settledEvents(db.dataSource);
      const first = await log.feed({}, { limit: 10 });
      expect(labels(first.items)).toEqual(['P0']);

      let commitA!: () => void;
      const a = openTransaction('A', new Promise<void>((resolve) => (commitA = resolve)));
      await a.written;
      await recordCommitted('B'); // numbered after A, committed before it
      // What a consumer ordered by seq sees now (B, not A): its checkpoint would pass A for good.
      expect(labels((await log.list({}, { limit: 10 })).items)).toEqual(['B', 'P0']);
      expect((await log.list({}, { limit: 10 })).items[0].position).toBeNull(); // B is not settled: no position

      // The feed consumer pages forward from its checkpoint: nothing after P0 while A is in progress.
      let checkpoint: FeedPosition = first.items[0].position;
      const during = await log.feed({}, { limit: 10, after: checkpoint });
      expect(during).toEqual({ items: [], hasMore: false });
      checkpoint = during.items.at(-1)?.position ?? checkpoint;

      commitA();
      await a.done;
      await settledEvents(db.dataSource);
      const after = await log.feed({}, { limit: 10, after: checkpoint });
      expect(labels(after.items)).toEqual(['A', 'B']);
      const [b, aEvent] = (await log.list({}, { limit: 10 })).items.filter((item) => item.id !== first.items[0].id);
      expect(aEvent.seq).toBeLessThan(b.seq); // A was numbered first, committed last
    });

    it('a writer that began first is ahead of one that committed first, and nothing passes it meanwhile', async () => {
      await recordCommitted('P0');
      await settledEvents(db.dataSource);
      const [p0] = (await log.feed({}, { limit: 10 })).items;

      // X takes its transaction id first (it writes something else before its event), records its event last.
      let commitX!: () => void;
      let xStarted!: () => void;
      const started = new Promise<void>((resolve) => (xStarted = resolve));
      let recordX!: () => void;
      const xMayRecord = new Promise<void>((resolve) => (recordX = resolve));
      const x = openTransaction('X', new Promise<void>((resolve) => (commitX = resolve)), async () => {
        await db.host.query('SELECT pg_current_xact_id()');
        xStarted();
        await xMayRecord;
      });
      await started;
      await recordCommitted('Y'); // a lower seq than X's, and committed first
      recordX();
      await x.written;
      expect((await log.feed({}, { limit: 10, after: p0.position })).items).toEqual([]);
      commitX();
      await x.done;
      await settledEvents(db.dataSource);
      const page = await log.feed({}, { limit: 10, after: p0.position });
      expect(labels(page.items)).toEqual(['X', 'Y']);
      // The events written before the commits were recorded (backfilled as transaction 0) come first.
      await db.dataSource.query(
        `UPDATE webhook_event_commits SET xact_id = '0' WHERE seq = (SELECT seq FROM webhook_events WHERE body = $1)`,
        ['{"label":"Y"}'],
      );
      expect(labels((await log.feed({}, { limit: 10 })).items)).toEqual(['Y', 'P0', 'X']);
    });
  });

  describe('the event log reads through its indexes (planner told to avoid sequential scans)', () => {
    /** The plan of the one statement `run` sends through the host, with the parameters it sent. */
    async function planOf(run: (log: PgEventLog) => Promise<unknown>, generic = false): Promise<string> {
      const sent: { sql: string; params: unknown[] }[] = [];
      const spy = jest.spyOn(db.host, 'query').mockImplementation(async (sql: string, params?: unknown[]) => {
        sent.push({ sql, params: params ?? [] });
        return [];
      });
      const execute = jest.spyOn(db.host, 'execute').mockImplementation(async (sql: string, params?: unknown[]) => {
        sent.push({ sql, params: params ?? [] });
        return { rows: [], affected: 0 };
      });
      try {
        await run(new PgEventLog(db.host));
      } finally {
        spy.mockRestore();
        execute.mockRestore();
      }
      expect(sent).toHaveLength(1);
      const runner = db.dataSource.createQueryRunner();
      try {
        await runner.startTransaction();
        await runner.query('SET LOCAL enable_seqscan = off');
        // As a prepared statement may be planned once used a few times: for no values in particular.
        if (generic) await runner.query('SET LOCAL plan_cache_mode = force_generic_plan');
        const rows: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN ${sent[0].sql}`, sent[0].params);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    }

    // A log of 50,000 events of 500 accounts (and the catalogue's, every account's) over 50 days, appended in time
    // order, with statistics.
    beforeAll(async () => {
      await resetDatabase(db.dataSource);
      await db.dataSource.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(),
                CASE n % 10 WHEN 0 THEN 'pet.status_changed' WHEN 5 THEN 'inventory.changed' ELSE 'order.placed' END,
                CASE n % 10 WHEN 0 THEN NULL WHEN 5 THEN 0 ELSE n % 500 END, '{}',
                timestamptz '2026-01-01' + n * interval '86 seconds'
           FROM generate_series(1, 50000) AS n`,
      );
      await db.dataSource.query('ANALYZE webhook_events, webhook_event_commits');
    });

    it("a customer's page by (subject_owner_id, seq), an administrator's by seq, newest first", async () => {
      expect(await planOf((log) => log.list({ subjectOwnerId: 7 }, { limit: 20, afterId: 1000 }))).toContain(
        'webhook_events_owner_seq_idx',
      );
      expect(await planOf((log) => log.list({}, { limit: 20, afterId: 1000 }))).toContain('webhook_events_seq_idx');
    });

    it("an administrator's page of some types: one backward scan of (type, seq) per type, merged", async () => {
      // Each type from the page's position down, cut at the page's size: a rare type reads no other type's events;
      // whether the statement is planned for its values or (prepared, used often) for none.
      for (const generic of [false, true]) {
        const plan = await planOf(
          (log) => log.list({ types: ['pet.status_changed', 'inventory.changed'] }, { limit: 20, afterId: 40_000 }),
          generic,
        );
        expect(plan).toMatch(/Index Scan Backward using webhook_events_type_seq_idx/);
        expect(plan).toMatch(/Index Cond: \(\(\(type\)::text >= wanted\.wanted\) AND .* AND \(seq < /);
        expect(plan).not.toMatch(/Seq Scan|webhook_events_seq_idx/);
      }
    });

    it("the feed by (transaction, seq), a customer's by (subject_owner_id, transaction, seq), either way", async () => {
      const at = { xact: '1000', seq: 1000 };
      expect(await planOf((log) => log.feed({ subjectOwnerId: 7 }, { limit: 20, after: at }))).toContain(
        'webhook_event_commits_owner_idx',
      );
      expect(await planOf((log) => log.feed({}, { limit: 20, before: at }))).toContain(
        'webhook_event_commits_xact_idx',
      );
      // The position bounds the index scan (not a filter over the log from its start).
      const after = await planOf((log) => log.feed({}, { limit: 20, after: at }));
      expect(after).toMatch(/Index Cond: .*ROW\(xact_id, seq\) > ROW\(/);
      // Each event joined by its seq through the unique index.
      expect(after).toContain('webhook_events_seq_idx');
      expect(await planOf((log) => log.feed({ types: ['order.placed'] }, { limit: 20 }))).toContain(
        'webhook_event_commits_xact_idx',
      );
      // A customer's feed: its events and the catalogue's, each branch through an index from the position on.
      const customer = await planOf((log) => log.feed({ subjectOwnerId: 7 }, { limit: 20, after: at }));
      expect(customer.match(/webhook_event_commits_owner_idx/g)?.length).toBeGreaterThanOrEqual(1);
      expect(customer).not.toMatch(/Seq Scan/);
    });

    it("a customer's page (its events and the catalogue's) reads two index ranges, newest first", async () => {
      const plan = await planOf((log) => log.list({ subjectOwnerId: 7 }, { limit: 20, afterId: 40_000 }));
      // Each branch walks an index newest first and stops at the page's size (the catalogue's, 1 event in 10 here,
      // by (subject_owner_id, seq) or by seq, as the planner likes): nothing reads every event of an owner to sort it.
      expect(plan.match(/Index Scan Backward using webhook_events_(owner_)?seq_idx/g)).toHaveLength(2);
      expect(plan).toContain('webhook_events_owner_seq_idx');
      expect(plan).not.toMatch(/Seq Scan|Bitmap/);
    });

    // Issue 48, item 5: `createdBefore` before every event walked a customer's whole history (here 100 of its own and
    // 5,000 of the catalogue's) to answer an empty page.
    it('a time-bounded page reads at most TIME_BOUNDED_SCAN_LIMIT rows of each range, newest first', async () => {
      const returned: Array<{ sql: string; rows: number }> = [];
      const query = db.host.query.bind(db.host);
      const spy = jest.spyOn(db.host, 'query').mockImplementation(async (sql: string, params?: unknown[]) => {
        const rows = await query(sql, params);
        returned.push({ sql, rows: rows.length });
        return rows;
      });
      try {
        const page = await new PgEventLog(db.host).list(
          { subjectOwnerId: 7, createdBefore: new Date('2025-12-31T00:00:00Z') },
          { limit: 20 },
        );
        expect(page.items).toEqual([]);
        // The catalogue's range stopped at its limit: the next page goes on below it.
        expect(page.nextAfterId).toEqual(expect.any(Number));
      } finally {
        spy.mockRestore();
      }
      expect(returned.map((statement) => statement.rows)).toEqual([100, TIME_BOUNDED_SCAN_LIMIT]);
      // Each range through its index, newest first, cut at the limit: never a scan of the table or a sort.
      const runner = db.dataSource.createQueryRunner();
      try {
        await runner.startTransaction();
        await runner.query('SET LOCAL plan_cache_mode = force_generic_plan');
        const plan: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN ${returned[1].sql}`, [
          null,
          TIME_BOUNDED_SCAN_LIMIT,
          null,
          null,
          new Date('2025-12-31T00:00:00Z'),
          0,
        ]);
        const text = plan.map((row) => row['QUERY PLAN']).join('\n');
        expect(text).toMatch(/Limit[\s\S]*Index Scan Backward using webhook_events_(owner_)?seq_idx/);
        expect(text).not.toMatch(/Seq Scan|Sort/);
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    });

    it('the purge finds the old events through the BRIN index on created_at', async () => {
      expect(await planOf((log) => log.purgeBatch(new Date('2026-01-01T00:00:00Z'), 10_000))).toContain(
        'webhook_events_created_brin',
      );
    });
  });

  describe("an administrator's list of some types", () => {
    const log = () => new PgEventLog(db.host);
    beforeAll(async () => {
      await resetDatabase(db.dataSource);
      // seq 1…12: order.placed, pet.updated, inventory.changed, in turns (owners 7, 0, NULL).
      await db.dataSource.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(), (ARRAY['order.placed', 'pet.updated', 'inventory.changed'])[(n - 1) % 3 + 1],
                (ARRAY[7, 0, NULL])[(n - 1) % 3 + 1]::bigint, '{}', timestamptz '2026-01-01' + n * interval '1 second'
           FROM generate_series(1, 12) AS n ORDER BY n`,
      );
    });

    it('merges the types newest first, pages by seq, ignores a repeated type, keeps the date bounds', async () => {
      const seen = async (query: Parameters<PgEventLog['list']>[0], afterId?: number, limit = 3) => {
        const page = await log().list(query, { limit, afterId });
        return { items: page.items.map((event) => [event.seq, event.type]), next: page.nextAfterId };
      };
      const both = ['pet.updated', 'order.placed'] as const;
      expect(await seen({ types: [...both] })).toEqual({
        items: [
          [11, 'pet.updated'],
          [10, 'order.placed'],
          [8, 'pet.updated'],
        ],
        next: 8,
      });
      expect(await seen({ types: [...both] }, 8)).toEqual({
        items: [
          [7, 'order.placed'],
          [5, 'pet.updated'],
          [4, 'order.placed'],
        ],
        next: 4,
      });
      expect(await seen({ types: [...both] }, 4)).toEqual({
        items: [
          [2, 'pet.updated'],
          [1, 'order.placed'],
        ],
        next: null,
      });
      expect(await seen({ types: ['inventory.changed', 'inventory.changed'] }, undefined, 10)).toEqual({
        items: [
          [12, 'inventory.changed'],
          [9, 'inventory.changed'],
          [6, 'inventory.changed'],
          [3, 'inventory.changed'],
        ],
        next: null,
      });
      const window = {
        createdAfter: new Date('2026-01-01T00:00:04Z'),
        createdBefore: new Date('2026-01-01T00:00:10Z'),
      };
      expect((await seen({ types: [...both], ...window }, undefined, 10)).items).toEqual([
        [8, 'pet.updated'],
        [7, 'order.placed'],
        [5, 'pet.updated'],
        [4, 'order.placed'],
      ]);
      expect(await seen({ types: ['message.delivered'] })).toEqual({ items: [], next: null });
    });
  });

  describe("a customer's list", () => {
    const log = () => new PgEventLog(db.host);
    beforeAll(async () => {
      await resetDatabase(db.dataSource);
      // seq 1…12: owner 7's order, owner 8's order, the store's status change, then the catalogue's, in turns.
      await db.dataSource.query(
        `INSERT INTO webhook_events (id, type, subject_owner_id, body, created_at)
         SELECT gen_random_uuid(), t.type, t.owner, '{}', timestamptz '2026-01-01' + n * interval '1 second'
           FROM generate_series(1, 12) AS n,
                LATERAL (SELECT (ARRAY['order.placed', 'order.placed', 'pet.status_changed', 'pet.updated',
                                       'inventory.changed', 'category.created'])[(n - 1) % 6 + 1] AS type,
                                (ARRAY[7, 8, NULL, 0, 0, 0])[(n - 1) % 6 + 1]::bigint AS owner) AS t
          ORDER BY n`,
      );
    });

    it("holds its own and the catalogue's, newest first, paged, filtered; never another's or the store's", async () => {
      const seen = async (query: Parameters<PgEventLog['list']>[0], afterId?: number) =>
        (await log().list(query, { limit: 3, afterId })).items.map((event) => [event.seq, event.type]);
      const first = await log().list({ subjectOwnerId: 7 }, { limit: 3 });
      expect(first.items.map((event) => [event.seq, event.type])).toEqual([
        [12, 'category.created'],
        [11, 'inventory.changed'],
        [10, 'pet.updated'],
      ]);
      expect(first.nextAfterId).toBe(10);
      expect(await seen({ subjectOwnerId: 7 }, 10)).toEqual([
        [7, 'order.placed'],
        [6, 'category.created'],
        [5, 'inventory.changed'],
      ]);
      expect(await seen({ subjectOwnerId: 7, types: ['order.placed', 'pet.status_changed', 'pet.updated'] })).toEqual([
        [10, 'pet.updated'],
        [7, 'order.placed'],
        [4, 'pet.updated'],
      ]);
      expect(await seen({ subjectOwnerId: 9, types: ['order.placed'] })).toEqual([]);
    });

    it('a time-bounded list reads each range a few rows a page: short pages go on, and none is skipped', async () => {
      class SmallScans extends PgEventLog {
        protected override readonly scanLimit = 4;
      }
      const small = new SmallScans(db.host);
      // Before 00:00:03, owner 7 sees seq 1 alone (seq 2 is owner 8's). Its own range (seq 7, 1) is read whole; the
      // catalogue's (12, 11, 10, 6, 5, 4) stops at 6 on the first page.
      const query = { subjectOwnerId: 7, createdBefore: new Date('2026-01-01T00:00:03Z') };
      const first = await small.list(query, { limit: 3 });
      expect({ seqs: first.items.map((event) => event.seq), next: first.nextAfterId }).toEqual({ seqs: [], next: 6 });
      const second = await small.list(query, { limit: 3, afterId: 6 });
      expect({ seqs: second.items.map((event) => event.seq), next: second.nextAfterId }).toEqual({
        seqs: [1],
        next: null,
      });
      // A bound that many match fills its pages as ever, cut where a range stopped.
      const recent = { subjectOwnerId: 7, createdAfter: new Date('2026-01-01T00:00:04Z') };
      const pages: number[][] = [];
      for (let afterId: number | undefined, i = 0; i < 10; i++) {
        const page = await small.list(recent, { limit: 3, afterId });
        pages.push(page.items.map((event) => event.seq));
        if (page.nextAfterId === null) break;
        afterId = page.nextAfterId;
      }
      expect(pages.flat()).toEqual([12, 11, 10, 7, 6, 5, 4]);
      expect(pages.every((page) => page.length <= 3)).toBe(true);
    });
  });
});
