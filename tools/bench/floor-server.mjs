// The floor of the catalogue cache scenario of `npm run bench` (issue 52, item 4; tools/bench/cache.mjs): the least a
// Node server can do for a catalogue read answered from memory, to tell what the service's cache hit costs beyond
// answering bytes at all. The same stack as the minimal baseline (Fastify, `pg`, the same Node), the same key check
// (the presented key's SHA-256, looked up in api_keys joined to accounts, revoked keys refused), its outcome kept in
// memory as the service's VerifiedKeyCache keeps a valid key (an unknown key is asked every time, as there), then the
// answer's bytes and headers as the service sent them for that URL (its body, `Content-Type`, `ETag`, `Link`), read
// once by the bench from a cached instance (RAW_FLOOR_ANSWERS: a JSON file, URL → answer), with `If-None-Match`
// answered 304 as the service does. Nothing else: no revocation signal, no expiry, no rate limit, no logging, no
// request id, no security headers. Not product code; it answers only the URLs it was given (404 otherwise).
// Run: DATABASE_URL=… PORT=… RAW_FLOOR_ANSWERS=… node tools/bench/floor-server.mjs (it prints "ready" when listening).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import pg from 'pg';

const answers = new Map(
  Object.entries(JSON.parse(readFileSync(process.env.RAW_FLOOR_ANSWERS, 'utf8'))).map(([url, a]) => [
    url,
    { body: Buffer.from(a.body, 'base64'), contentType: a.contentType, etag: a.etag, link: a.link },
  ]),
);
// The minimal baseline's pool size (tools/bench/raw-server.mjs): used for key lookups only.
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ logger: false });
/** Valid keys by hash: the account a key verified to (only valid keys are kept, as the service's cache). */
const verified = new Map();

const unauthorized = (reply) =>
  reply.code(401).send({ code: 'unauthorized', message: 'A valid API key is required.', status: 401 });

app.get('/health/ready', async () => ({ status: 'ok' }));

app.get('/*', async (request, reply) => {
  const header = request.headers.authorization ?? '';
  const presented = header.startsWith('Bearer ') ? header.slice(7) : '';
  if (!presented) return unauthorized(reply);
  const hash = createHash('sha256').update(presented, 'utf8').digest('hex');
  if (!verified.has(hash)) {
    const { rows } = await pool.query(
      `SELECT k.id AS key_id, a.id AS account_id, a.role
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    if (rows.length === 0) return unauthorized(reply);
    verified.set(hash, { id: Number(rows[0].account_id), role: rows[0].role });
  }
  const answer = answers.get(request.url);
  if (!answer)
    return reply.code(404).send({ code: 'not_found', message: 'Not one of the floor answers.', status: 404 });
  void reply.header('etag', answer.etag);
  if (request.headers['if-none-match'] === answer.etag) return reply.code(304).send();
  void reply.header('content-type', answer.contentType);
  if (answer.link) void reply.header('link', answer.link);
  return reply.send(answer.body);
});

async function shutdown() {
  await app.close();
  await pool.end();
  process.exit(0);
}
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);

await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('ready');
