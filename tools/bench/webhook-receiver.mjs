// The webhook receivers of the bench's webhooks scenario (tools/bench/webhooks.mjs): one process of its own, so that
// receiving costs the bench's process nothing and the service's nothing, serving every endpoint's URL on one port:
// `POST /hook/<n>` is endpoint n. It answers 200 at once, or after a delay (`slow`), or 500 (`fail`), as the bench
// sets per endpoint, and records per request: the endpoint, the arrival time (ms since the epoch, to the
// microsecond: the bench's clock is the same machine's), the pet's name the body carries (the bench names each change
// it makes, which is how it finds the change's time), the event's `timestamp`, the `webhook-id` and the status it
// answered. The bench reads the records through the control paths:
//
//   GET  /control/records?from=<i>  {total, inFlight, records: [[n, arrival, name, eventTime, webhookId, status]…]}
//   POST /control/modes             {slow: [n…], fail: [n…], slowMs}: every other endpoint answers 200 at once
//
// RECEIVER_PORT is the port (127.0.0.1 only). It prints `ready` once listening, and exits when its parent does.
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';

const port = Number(process.env.RECEIVER_PORT);
if (!Number.isInteger(port) || port < 1) throw new Error('RECEIVER_PORT must be a port');

const now = () => performance.timeOrigin + performance.now();
/** Endpoint number → 'slow' | 'fail' (the others answer 200 at once). */
let modes = new Map();
let slowMs = 5_000;
const records = [];
let inFlight = 0;

function hook(request, response, n) {
  const arrival = now();
  inFlight++;
  response.once('close', () => inFlight--);
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    let name = null;
    let eventTime = null;
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      name = typeof body?.data?.name === 'string' ? body.data.name : null;
      eventTime = body?.timestamp ? Date.parse(body.timestamp) : null;
    } catch {
      // not JSON: recorded without a name, which no change of the bench matches
    }
    const mode = modes.get(n);
    const status = mode === 'fail' ? 500 : 200;
    records.push([
      n,
      Math.round(arrival * 1000) / 1000,
      name,
      eventTime,
      request.headers['webhook-id'] ?? null,
      status,
    ]);
    const answer = () => response.writeHead(status, { 'content-length': 0 }).end();
    if (mode === 'slow') setTimeout(answer, slowMs);
    else answer();
  });
}

function json(response, status, value) {
  const text = JSON.stringify(value);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

function control(request, response, url) {
  if (request.method === 'GET' && url.pathname === '/control/records') {
    const from = Math.max(0, Number(url.searchParams.get('from') ?? 0) || 0);
    json(response, 200, { total: records.length, inFlight, records: records.slice(from) });
    return;
  }
  if (request.method === 'POST' && url.pathname === '/control/modes') {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const next = new Map();
        for (const n of body.slow ?? []) next.set(Number(n), 'slow');
        for (const n of body.fail ?? []) next.set(Number(n), 'fail');
        modes = next;
        if (Number.isFinite(body.slowMs) && body.slowMs >= 0) slowMs = body.slowMs;
        json(response, 200, { slow: body.slow?.length ?? 0, fail: body.fail?.length ?? 0, slowMs });
      } catch (error) {
        json(response, 400, { error: String(error) });
      }
    });
    return;
  }
  json(response, 404, { error: 'unknown control path' });
}

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  const hookMatch = /^\/hook\/(\d+)$/.exec(url.pathname);
  if (request.method === 'POST' && hookMatch) hook(request, response, Number(hookMatch[1]));
  else control(request, response, url);
});
// Bursts of new connections (the service opens one per delivery): a backlog the size the kernel allows.
server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => process.stdout.write('ready\n'));

// Orphaned (the bench was killed without stopping it): exit rather than hold the port.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1_000).unref();
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1_000).unref();
});
