// The catalogue cache scenario of `npm run bench` (issue 52, item 4): what a cached catalogue read costs, how late a
// change is seen on another instance, and what the cache costs in memory.
//
// Servers, started here: two instances of the service with the cache on (`app-cache` at LOG_LEVEL=warn,
// `app-cache-info` at the default info; every other cache setting its default), and the floor
// (tools/bench/floor-server.mjs: the same key check, then the same bytes from memory). The minimal baseline is
// run.mjs's (or one started here if the run has none). The reads are a customer's (an account made through
// POST /accounts that never writes): the bench's admin key places orders, and an account that wrote bypasses the
// cache for CATALOGUE_CACHE_MAX_AGE_MS (read-your-writes), so reads with it would measure bypasses, not hits.
//
// 1. Side by side: each catalogue read the cache covers (categories, pets by ids, a pet, the first page of available
//    pets, the inventory), BENCH_CACHE_ROUNDS rounds of BENCH_CACHE_SECONDS per server after a warm-up round, the
//    servers alternating; ratios of each cached instance against the minimal baseline and against the floor, and the
//    share of its reads that were hits (its /metrics, before and after).
// 2. Staleness under writes: `app-cache` is the writer (A), `app-cache-info` the reader (B), one database. On A,
//    orders at BENCH_CACHE_ORDER_RATE a second (random pets: stock changes, each announced) as write load; on B,
//    catalogue reads at BENCH_CACHE_READ_RATE a second as read load. Meanwhile BENCH_CACHE_CHANGES changes, one at a
//    time: the reader reads the pet on B twice (so that B holds its answer), an administrator renames it on A (PATCH),
//    and from the moment the PATCH's answer is back (the change committed) the reader asks B for the pet again and
//    again until B shows the new name: that time is the change's visibility delay (p50/p99/max; resolution: one
//    read's round trip, also reported). A change not seen within 10 s counts as 10 s.
// 3. Memory: `app-cache` is then filled for BENCH_CACHE_FILL_SECONDS with distinct pages (random cursors) until the
//    default bounds hold it; each cached instance's RSS after all that, its entries and bytes (/metrics).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import { benchCustomer } from './growth.mjs';

const VISIBLE_TIMEOUT_MS = 10_000;
/** The pets renamed by the staleness phase, in turn (outside the pets orders are placed on: no row-lock waits). */
const WATCHED_PETS = 20;
/** The cached instances, writer (A) first. */
const CACHED = ['app-cache', 'app-cache-info'];

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : null;
const round1 = (n) => (n === null || n === undefined ? null : Math.round(n * 10) / 10);
const cursor = (afterId) => Buffer.from(JSON.stringify({ after: afterId })).toString('base64url');

/** The scenario's settings (BENCH_CACHE_*), checked: run.mjs reads them at start, before anything runs. */
export function cacheSettings(env = process.env) {
  const whole = (name, fallback, min) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be a whole number, ${min} or more`);
    return value;
  };
  return {
    seconds: whole('BENCH_CACHE_SECONDS', 5, 1),
    rounds: whole('BENCH_CACHE_ROUNDS', 2, 1),
    changes: whole('BENCH_CACHE_CHANGES', 200, 1),
    orderRate: whole('BENCH_CACHE_ORDER_RATE', 200, 0),
    readRate: whole('BENCH_CACHE_READ_RATE', 500, 0),
    fillSeconds: whole('BENCH_CACHE_FILL_SECONDS', 10, 0),
  };
}

/** The catalogue_cache_* counters and gauges of an instance's /metrics. */
async function cacheMetrics(base, adminKey) {
  const text = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminKey}` } }).then((r) => {
    if (!r.ok) throw new Error(`GET /metrics answered ${r.status}`);
    return r.text();
  });
  const value = (name, labels = '') => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };
  const bypasses = Object.fromEntries(
    ['untrusted', 'writer', 'writers_unknown'].map((r) => [
      r,
      value('catalogue_cache_bypasses_total', `{reason="${r}"}`),
    ]),
  );
  return {
    hits: value('catalogue_cache_hits_total'),
    misses: value('catalogue_cache_misses_total'),
    bypasses,
    invalidations: Object.fromEntries(
      ['categories', 'pets', 'stock'].map((t) => [t, value('catalogue_cache_invalidations_total', `{table="${t}"}`)]),
    ),
    evictions: value('catalogue_cache_evictions_total'),
    discarded: value('catalogue_cache_discarded_total'),
    entries: value('catalogue_cache_entries'),
    bytes: value('catalogue_cache_bytes'),
  };
}

/** What happened between two readings: reads counted, and the share of them that were hits. */
function cacheDelta(before, after) {
  const bypasses = Object.fromEntries(
    Object.keys(after.bypasses).map((r) => [r, after.bypasses[r] - before.bypasses[r]]),
  );
  const hits = after.hits - before.hits;
  const misses = after.misses - before.misses;
  const bypassed = Object.values(bypasses).reduce((a, b) => a + b, 0);
  const reads = hits + misses + bypassed;
  return {
    hits,
    misses,
    bypasses,
    invalidations: Object.fromEntries(
      Object.keys(after.invalidations).map((t) => [t, after.invalidations[t] - before.invalidations[t]]),
    ),
    evictions: after.evictions - before.evictions,
    discarded: after.discarded - before.discarded,
    hitShare: reads ? +(hits / reads).toFixed(4) : null,
  };
}

/** An answer as the floor serves it: the body's bytes and the headers the service sent with them. */
async function answerOf(base, path, secret) {
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${secret}` } });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}: ${body.toString()}`);
  return {
    body: body.toString('base64'),
    contentType: response.headers.get('content-type'),
    etag: response.headers.get('etag'),
    link: response.headers.get('link') ?? undefined,
  };
}

/**
 * Runs the scenario. `servers.minimal` is run.mjs's minimal baseline if it has one; the rest is started here (with
 * run.mjs's start, so that a failure or Ctrl-C stops it) and stopped before returning.
 */
export async function cacheScenario(ctx) {
  const { settings: s, adminKey, db, databaseUrl, lo, hi, orderPets, warmupSeconds, connections } = ctx;
  const started = [];
  const servers = {};
  const tempDir = mkdtempSync(join(tmpdir(), 'petstore-bench-floor-'));
  try {
    for (const [name, level] of [
      [CACHED[0], 'warn'],
      [CACHED[1], 'info'],
    ]) {
      const port = await ctx.freePort();
      const child = ctx.startService(name, port, level, { CATALOGUE_CACHE: 'on' });
      started.push(child);
      servers[name] = { child, base: `http://127.0.0.1:${port}` };
      await ctx.waitUntil(`the service (${name})`, child, () =>
        fetch(`${servers[name].base}/health/ready`).then((r) => r.ok),
      );
    }
    const customer = await benchCustomer(servers[CACHED[0]].base);
    const asCustomer = { authorization: `Bearer ${customer.secret}` };
    const ids = Array.from({ length: 10 }, (_, i) => lo + 1 + i * Math.floor((hi - lo) / 10));
    const reads = [
      { key: 'categories', name: '`GET /categories?limit=20`', path: '/categories?limit=20' },
      { key: 'petsByIds', name: '`GET /pets?ids=` (10 ids)', path: `/pets?ids=${ids.join(',')}` },
      { key: 'petById', name: '`GET /pets/{petId}`', path: `/pets/${ids[3]}` },
      { key: 'firstPage', name: '`GET /pets?status=available` first page', path: '/pets?status=available&limit=20' },
      { key: 'inventory', name: '`GET /store/inventory`', path: '/store/inventory' },
    ].map((read) => ({ ...read, headers: asCustomer }));

    // The floor's answers: what the cached instance sends for each URL, read once.
    const answers = {};
    for (const read of reads) answers[read.path] = await answerOf(servers[CACHED[0]].base, read.path, customer.secret);
    const answersFile = join(tempDir, 'answers.json');
    writeFileSync(answersFile, JSON.stringify(answers));
    const floorPort = await ctx.freePort();
    const floor = ctx.startChild('floor', ['tools/bench/floor-server.mjs'], {
      PORT: String(floorPort),
      DATABASE_URL: databaseUrl,
      RAW_FLOOR_ANSWERS: answersFile,
    });
    started.push(floor);
    servers.floor = { child: floor, base: `http://127.0.0.1:${floorPort}` };
    await ctx.waitUntil('the floor', floor, () => fetch(`${servers.floor.base}/health/ready`).then((r) => r.ok));
    if (ctx.minimalBase) servers.minimal = { base: ctx.minimalBase };
    else {
      const port = await ctx.freePort();
      const child = ctx.startChild('minimal', ['tools/bench/raw-server.mjs'], {
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        RAW_MODE: 'minimal',
      });
      started.push(child);
      servers.minimal = { child, base: `http://127.0.0.1:${port}` };
      await ctx.waitUntil('the minimal baseline', child, () =>
        fetch(`${servers.minimal.base}/categories?limit=1`, { headers: asCustomer }).then((r) => r.ok),
      );
    }
    // The floor answers the bytes the service answers, on both instances.
    const sameBytes = [];
    for (const read of reads) {
      for (const name of [CACHED[1], 'floor']) {
        const other = await answerOf(servers[name].base, read.path, customer.secret);
        if (other.body !== answers[read.path].body) sameBytes.push(`${read.key} ${name}`);
      }
    }
    if (sameBytes.length) console.log(`  cache: answers differ from app-cache's: ${sameBytes.join(', ')}`);

    const order = [...CACHED, 'minimal', 'floor'];
    const sideBySide = [];
    console.log(
      `\ncatalogue cache: a customer's reads, ${connections} connections, ${s.seconds} s × ${s.rounds} round(s) per ` +
        `server (${order.join(', ')} alternating); ratios cached/minimal and cached/floor, warn / info`,
    );
    for (const read of reads) {
      const rounds = Object.fromEntries(order.map((n) => [n, []]));
      const before = {};
      for (const name of CACHED) before[name] = await cacheMetrics(servers[name].base, adminKey);
      if (warmupSeconds > 0) for (const name of order) await ctx.measure(servers[name].base, read, db, warmupSeconds);
      for (let round = 0; round < s.rounds; round++) {
        for (const name of order) rounds[name].push(await ctx.measure(servers[name].base, read, db, s.seconds));
      }
      const results = Object.fromEntries(order.map((n) => [n, ctx.mergeRounds(rounds[n])]));
      for (const name of CACHED) {
        results[name].cache = cacheDelta(before[name], await cacheMetrics(servers[name].base, adminKey));
      }
      const ratio = (a, b) => +(results[a].reqPerSec / Math.max(results[b].reqPerSec, 1)).toFixed(2);
      const entry = {
        key: read.key,
        name: read.name,
        results,
        vsMinimal: ratio(CACHED[0], 'minimal'),
        vsMinimalInfo: ratio(CACHED[1], 'minimal'),
        vsFloor: ratio(CACHED[0], 'floor'),
        vsFloorInfo: ratio(CACHED[1], 'floor'),
      };
      sideBySide.push(entry);
      const trouble = order.filter((n) => results[n].non2xx + results[n].errors > 0);
      console.log(
        `  ${read.key.padEnd(11)} ${order.map((n) => `${n} ${results[n].reqPerSec} r/s`).join(', ')}; ` +
          `vs minimal ${entry.vsMinimal} / ${entry.vsMinimalInfo}, vs floor ${entry.vsFloor} / ${entry.vsFloorInfo}; ` +
          `p99 ${order.map((n) => results[n].p99).join('/')} ms; hits ` +
          `${CACHED.map((n) => results[n].cache.hitShare).join(' / ')}` +
          (trouble.length
            ? `; non-2xx/errors ${trouble.map((n) => `${n} ${results[n].non2xx}/${results[n].errors}`).join(', ')}`
            : ''),
      );
    }
    const afterLoad = Object.fromEntries(CACHED.map((n) => [n, ctx.memoryOf(servers[n].child.pid)]));

    const staleness = await stalenessUnderWrites({
      writer: servers[CACHED[0]].base,
      reader: servers[CACHED[1]].base,
      adminKey,
      asCustomer,
      readPaths: reads.map((r) => r.path),
      watched: Array.from({ length: WATCHED_PETS }, (_, i) => hi - i),
      orderPets,
      settings: s,
    });
    console.log(
      `  staleness (a change on ${CACHED[0]}, read on ${CACHED[1]}; orders ${staleness.orders.reqPerSec} r/s on ` +
        `${CACHED[0]}, reads ${staleness.readLoad.reqPerSec} r/s on ${CACHED[1]}): ${staleness.changes} changes, ` +
        `visible after p50 ${staleness.p50} ms, p99 ${staleness.p99} ms, max ${staleness.max} ms ` +
        `(not before p50 ${staleness.notBefore.p50} ms, p99 ${staleness.notBefore.p99} ms; ` +
        `${staleness.notSeen} not seen within ${VISIBLE_TIMEOUT_MS / 1000} s; a read's round trip p50 ` +
        `${staleness.pollP50} ms); the reader's cache meanwhile: ${JSON.stringify(staleness.readerCache)}`,
    );

    // Filled: distinct pages until the default bounds hold it.
    let fill = null;
    if (s.fillSeconds > 0) {
      const before = await cacheMetrics(servers[CACHED[0]].base, adminKey);
      const result = await autocannon({
        url: servers[CACHED[0]].base,
        connections,
        duration: s.fillSeconds,
        headers: asCustomer,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({
              ...request,
              path: `/pets?status=available&limit=20&cursor=${cursor(lo + Math.floor(Math.random() * (hi - lo)))}`,
            }),
          },
        ],
      });
      const after = await cacheMetrics(servers[CACHED[0]].base, adminKey);
      fill = {
        requests: result.requests.total,
        non2xx: result.non2xx,
        entries: after.entries,
        bytes: after.bytes,
        evictions: after.evictions - before.evictions,
      };
    }
    const memory = {};
    for (const name of CACHED) {
      const m = ctx.memoryOf(servers[name].child.pid);
      const { entries, bytes } = await cacheMetrics(servers[name].base, adminKey);
      memory[name] = {
        rssAfterLoadMb: afterLoad[name].rssMb,
        rssAfterMb: m.rssMb,
        peakRssMb: m.hwmMb,
        entries,
        cacheMb: round1(bytes / 1024 / 1024),
      };
    }
    console.log(
      `  memory: ${CACHED.map(
        (n) =>
          `${n} RSS ${memory[n].rssAfterLoadMb} MB after the reads, ${memory[n].rssAfterMb} MB at the end ` +
          `(peak ${memory[n].peakRssMb}; ${memory[n].entries} entries, ${memory[n].cacheMb} MB)`,
      ).join('; ')}` +
        (fill ? `; ${CACHED[0]} filled with ${fill.requests} distinct pages (${fill.evictions} evicted)` : ''),
    );
    return { settings: s, sideBySide, staleness, fill, memory, sameBytes: sameBytes.length === 0 };
  } finally {
    for (const child of started.reverse()) await ctx.stopChild(child);
    rmSync(tempDir, { recursive: true, force: true });
  }
}

/** Step 2 of the scenario: see the top of this file. */
async function stalenessUnderWrites({ writer, reader, adminKey, asCustomer, readPaths, watched, orderPets, settings }) {
  const asAdmin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const pick = () => orderPets[Math.floor(Math.random() * orderPets.length)];
  // Long enough for every change; stopped when they are done.
  const loadSeconds = Math.ceil(settings.changes / 2) + 60;
  const orders =
    settings.orderRate > 0
      ? autocannon({
          url: writer,
          connections: Math.min(10, settings.orderRate),
          overallRate: settings.orderRate,
          duration: loadSeconds,
          headers: asAdmin,
          requests: [
            {
              method: 'POST',
              path: '/store/orders',
              setupRequest: (request) => ({ ...request, body: JSON.stringify({ petId: pick(), quantity: 1 }) }),
            },
          ],
        })
      : null;
  let next = 0;
  const readLoad =
    settings.readRate > 0
      ? autocannon({
          url: reader,
          connections: Math.min(20, settings.readRate),
          overallRate: settings.readRate,
          duration: loadSeconds,
          headers: asCustomer,
          requests: [{ method: 'GET', setupRequest: (r) => ({ ...r, path: readPaths[next++ % readPaths.length] }) }],
        })
      : null;
  const readerBefore = await cacheMetrics(reader, adminKey);
  const delays = [];
  /**
   * From the commit to the sending of the last read that did not show it (0: the first read did): the change became
   * visible after that, the lower end of the bracket `delays` is the upper end of.
   */
  const notBefore = [];
  const polls = [];
  let notSeen = 0;
  try {
    await sleep(1000);
    for (let i = 0; i < settings.changes; i++) {
      const pet = watched[i % watched.length];
      const path = `${reader}/pets/${pet}`;
      let sentAt = 0;
      const nameNow = async () => {
        sentAt = performance.now();
        const response = await fetch(path, { headers: asCustomer });
        const body = await response.json();
        polls.push(performance.now() - sentAt);
        if (response.status !== 200) throw new Error(`GET /pets/${pet} on the reader answered ${response.status}`);
        return body.name;
      };
      await nameNow();
      await nameNow();
      const name = `Bench change ${i} ${Date.now()}`;
      const response = await fetch(`${writer}/pets/${pet}`, {
        method: 'PATCH',
        headers: asAdmin,
        body: JSON.stringify({ name }),
      });
      if (response.status !== 200)
        throw new Error(`PATCH /pets/${pet} answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
      const committed = performance.now();
      let seen = null;
      let staleSent = committed;
      while (performance.now() - committed < VISIBLE_TIMEOUT_MS) {
        if ((await nameNow()) === name) {
          seen = performance.now();
          break;
        }
        staleSent = sentAt;
      }
      if (seen === null) notSeen++;
      delays.push((seen ?? committed + VISIBLE_TIMEOUT_MS) - committed);
      notBefore.push(staleSent - committed);
      // Changes apart, as an administrator's edits are.
      await sleep(10 + Math.random() * 40);
    }
  } finally {
    orders?.stop();
    readLoad?.stop();
  }
  const [ordered, read] = await Promise.all([orders, readLoad]);
  const readerCache = cacheDelta(readerBefore, await cacheMetrics(reader, adminKey));
  delays.sort((a, b) => a - b);
  notBefore.sort((a, b) => a - b);
  polls.sort((a, b) => a - b);
  const load = (r) =>
    r ? { reqPerSec: Math.round(r.requests.average), p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors } : null;
  return {
    changes: delays.length,
    p50: round1(percentile(delays, 50)),
    p99: round1(percentile(delays, 99)),
    max: round1(delays[delays.length - 1]),
    notSeen,
    notBefore: { p50: round1(percentile(notBefore, 50)), p99: round1(percentile(notBefore, 99)) },
    pollP50: round1(percentile(polls, 50)),
    orders: load(ordered) ?? { reqPerSec: 0 },
    readLoad: load(read) ?? { reqPerSec: 0 },
    readerCache,
  };
}

/** The issue's targets for the cache (issue 52, "Done when"). */
export function cacheTargets(c) {
  if (!c) return [];
  const each = (field, ok) => ({
    met: c.sideBySide.every((e) => ok(e[field])),
    measured: c.sideBySide.map((e) => `${e.key} ${e[field]}`).join(', '),
  });
  return [
    { target: 'cached catalogue reads ≥ 2× the minimal baseline (warn)', ...each('vsMinimal', (v) => v >= 2) },
    { target: 'cached catalogue reads ≥ 2× the minimal baseline (info)', ...each('vsMinimalInfo', (v) => v >= 2) },
    { target: 'cached catalogue reads ≥ 0.5× the floor (warn)', ...each('vsFloor', (v) => v >= 0.5) },
    { target: 'cached catalogue reads ≥ 0.5× the floor (info)', ...each('vsFloorInfo', (v) => v >= 0.5) },
    {
      target: 'a change visible on another instance within 100 ms p99, under write load',
      met: c.staleness.p99 !== null && c.staleness.p99 <= 100,
      measured:
        `p99 ${c.staleness.p99} ms (p50 ${c.staleness.p50}, max ${c.staleness.max}, ` +
        `${c.staleness.changes} changes)`,
    },
    {
      target: 'RSS after load ≤ 250 MB with the default cache',
      met: Object.values(c.memory).every((m) => m.rssAfterMb <= 250),
      measured: Object.entries(c.memory)
        .map(([n, m]) => `${n} ${m.rssAfterMb} MB (${m.entries} entries, ${m.cacheMb} MB cached)`)
        .join(', '),
    },
  ];
}

/** The report's section. */
export function cacheMarkdown(c) {
  const servers = [...CACHED, 'minimal', 'floor'];
  const s = c.settings;
  const st = c.staleness;
  return [
    '',
    '## Catalogue cache (issue 52)',
    '',
    `A customer's reads (an account that never writes), ${s.seconds} s × ${s.rounds} round(s) per server after a ` +
      `warm-up round, alternating: \`app-cache\` and \`app-cache-info\`, the service with the default cache at warn ` +
      'and at info; `minimal`, the minimal baseline; `floor`, the same key check and the same bytes from memory ' +
      `(tools/bench/floor-server.mjs; its bytes ${c.sameBytes ? 'equal' : '**differ from**'} the service's). ` +
      "Hits: the share of the cached instance's reads answered from the cache in those rounds (its /metrics).",
    '',
    `| read | ${servers.map((n) => `${n} req/s`).join(' | ')} | vs minimal warn / info | vs floor warn / info | ` +
      `p99 ms ${servers.join(' / ')} | hits warn / info | SQL/req ${servers.join(' / ')} |`,
    `|---|${servers.map(() => '---|').join('')}---|---|---|---|---|`,
    ...c.sideBySide.map((e) => {
      const r = e.results;
      return (
        `| ${e.name} | ${servers.map((n) => r[n].reqPerSec).join(' | ')} | ${e.vsMinimal} / ${e.vsMinimalInfo} | ` +
        `${e.vsFloor} / ${e.vsFloorInfo} | ${servers.map((n) => r[n].p99).join(' / ')} | ` +
        `${CACHED.map((n) => r[n].cache.hitShare).join(' / ')} | ` +
        `${servers.map((n) => r[n].statementsPerRequest ?? 'n/a').join(' / ')} |` +
        (servers.some((n) => r[n].non2xx + r[n].errors > 0)
          ? ` ⚠ non-2xx/errors ${servers.map((n) => `${n} ${r[n].non2xx}/${r[n].errors}`).join(', ')}`
          : '')
      );
    }),
    '',
    `**Staleness under writes**: ${st.changes} pet renames (PATCH) on \`${CACHED[0]}\`, each read on ` +
      `\`${CACHED[1]}\` until it shows, timed from the PATCH's answer; meanwhile orders on \`${CACHED[0]}\` ` +
      `(${st.orders.reqPerSec} r/s, p99 ${st.orders.p99 ?? '–'} ms) and catalogue reads on \`${CACHED[1]}\` ` +
      `(${st.readLoad.reqPerSec} r/s). Visible after p50 **${st.p50} ms**, p99 **${st.p99} ms**, max ${st.max} ms; ` +
      `${st.notSeen} not seen within ${VISIBLE_TIMEOUT_MS / 1000} s. Those times end when the first answer showing ` +
      `the change is back, so they include that read's round trip (p50 ${st.pollP50} ms); the change was still ` +
      `not visible when the read before it was sent: p50 ${st.notBefore.p50} ms, p99 ${st.notBefore.p99} ms after ` +
      `the commit (0: the first read showed it). The reader's cache in that time: ${st.readerCache.hits} hits, ` +
      `${st.readerCache.misses} ` +
      `misses, bypasses ${Object.entries(st.readerCache.bypasses)
        .map(([r, n]) => `${r} ${n}`)
        .join(', ')}; invalidations ${Object.entries(st.readerCache.invalidations)
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')}.`,
    '',
    `**Memory**: ${Object.entries(c.memory)
      .map(
        ([n, m]) =>
          `\`${n}\` RSS ${m.rssAfterLoadMb} MB after the reads, **${m.rssAfterMb} MB** at the end (peak ` +
          `${m.peakRssMb} MB), holding ${m.entries} entries (${m.cacheMb} MB as counted for the bound)`,
      )
      .join('; ')}` +
      (c.fill
        ? `; \`${CACHED[0]}\` was filled before that with ${c.fill.requests} reads of distinct pages ` +
          `(${c.fill.evictions} entries evicted to stay within the default bounds${
            c.fill.non2xx ? `, ${c.fill.non2xx} not 2xx` : ''
          }).`
        : '.'),
  ];
}
