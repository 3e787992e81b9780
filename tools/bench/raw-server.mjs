// The baselines of `npm run bench`: a Fastify + `pg` server answering the benchmarked routes, in one of two
// modes (RAW_MODE):
// - `mirrored` (default): the same work as the service per request: the same API-key check (SHA-256 of the
//   presented key, looked up by its unique hash in api_keys joined to accounts, revoked keys refused, last use
//   recorded at most once a minute per key) and the same SQL statements as the service's repositories
//   (libs/infrastructure/src/persistence/*), its extra work included (the event log's INSERT, sent with the
//   order's own writes in one statement, as the service does). It shows what the framework layers cost.
// - `minimal`: the simplest correct handler a user would write for the same job, which is what a user
//   deciding whether this stack is worth it compares with: the key lookup, then for an order lock the pet and
//   its stock, update, insert the order (its id from the column default, RETURNING), commit; nothing else.
// No framework layers, no ORM, no DTO classes in either. Not product code; it answers only the benchmarked routes.
// Run: DATABASE_URL=… PORT=… [RAW_MODE=minimal] node tools/bench/raw-server.mjs (it prints "ready" when listening).
import { createHash, randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';
// The service's own statements, by name: the snapshots in tools/bench/sql/ of what it sends for these requests,
// written and held equal to it by apps/api/test/bench-sql.e2e.spec.ts (`npm run bench:sql`).
import { readStatements } from './service-sql.cjs';

const SQL = readStatements();

const PAGE_DEFAULT = 20;
const PAGE_MAX = 100;
const TOUCH_EVERY_MS = 60_000;
const MODE = process.env.RAW_MODE ?? 'mirrored';
if (MODE !== 'mirrored' && MODE !== 'minimal') throw new Error('RAW_MODE is mirrored or minimal');
const MINIMAL = MODE === 'minimal';
// libs/infrastructure/src/message/pg-boss-message-queue.ts
const MESSAGE_DELIVERY_QUEUE = 'message-delivery';
/** The webhook body (OutboxEventRecorder): the resource as the response shows it. */
const event = (type, at, data) => JSON.stringify({ type, timestamp: at.toISOString(), data });

// The service's pool (libs/infrastructure/src/database/data-source.ts: max 10).
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.RAW_POOL_SIZE ?? 10),
});
const app = Fastify({ logger: false });

class HttpError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

app.setErrorHandler((error, _request, reply) => {
  const status = error.status ?? error.statusCode ?? 500;
  reply.code(status).send({ code: error.code ?? 'error', message: error.message, status });
});

const lastTouched = new Map();

// RAW_SHED_LIMIT (the overload scenario's control, tools/bench/overload.mjs): at most this many requests in
// flight, every other one answered 503 at once, before the key check: the cheapest shedder a user could write,
// a fixed cap with no queue, to tell what the service's adaptive admission costs from what overload itself costs.
const isHealth = (request) => request.url.startsWith('/health/');
const SHED_LIMIT = Number(process.env.RAW_SHED_LIMIT ?? 0);
if (SHED_LIMIT > 0) {
  let inFlight = 0;
  app.addHook('onRequest', (request, reply, done) => {
    if (inFlight >= SHED_LIMIT && !isHealth(request)) {
      reply.code(503).header('retry-after', '1').send({ code: 'overloaded', message: 'Overloaded.', status: 503 });
      return;
    }
    inFlight++;
    // 'close' comes after the answer and also when the client goes first (onResponse would miss that one).
    reply.raw.once('close', () => inFlight--);
    done();
  });
}

app.addHook('onRequest', async (request) => {
  if (isHealth(request)) return;
  const header = request.headers.authorization ?? '';
  const presented = header.startsWith('Bearer ') ? header.slice(7) : '';
  if (!presented) throw new HttpError(401, 'unauthorized', 'A valid API key is required.');
  const hash = createHash('sha256').update(presented, 'utf8').digest('hex');
  if (MINIMAL) {
    const { rows } = await pool.query(
      `SELECT k.id AS key_id, a.id AS account_id, a.role
         FROM api_keys k JOIN accounts a ON a.id = k.account_id
        WHERE k.hash = $1 AND k.revoked_at IS NULL`,
      [hash],
    );
    if (rows.length === 0) throw new HttpError(401, 'unauthorized', 'A valid API key is required.');
    request.account = { id: Number(rows[0].account_id), role: rows[0].role };
    return;
  }
  // As the service: the key by its hash, then revoked and expired keys refused in code.
  const [key] = (await pool.query(SQL.keyByHash, [hash])).rows;
  if (!key || key.revoked_at !== null || (key.expires_at !== null && key.expires_at <= new Date())) {
    throw new HttpError(401, 'unauthorized', 'A valid API key is required.');
  }
  const keyId = Number(key.id);
  request.account = { id: Number(key.account_id), role: key.account_role };
  const now = Date.now();
  const previous = lastTouched.get(keyId);
  if (previous === undefined || now - previous >= TOUCH_EVERY_MS) {
    lastTouched.set(keyId, now);
    await pool.query(SQL.touchKey, [keyId, new Date(now)]);
  }
});

function page(query) {
  const limit = query.limit === undefined ? PAGE_DEFAULT : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > PAGE_MAX) throw new HttpError(400, 'validation', 'bad limit');
  let afterId = null;
  if (query.cursor !== undefined) {
    const after = JSON.parse(Buffer.from(String(query.cursor), 'base64url').toString('utf8'))?.after;
    if (!Number.isSafeInteger(after) || after < 1) throw new HttpError(400, 'validation', 'bad cursor');
    afterId = after;
  }
  return { limit, afterId };
}

/** Same contract as the service: a JSON array, and a Link header when more items exist. */
function sendPage(request, reply, rows, limit, idOf) {
  if (rows.length > limit) {
    rows.length = limit;
    const url = new URL(request.url, 'http://placeholder');
    url.searchParams.set('cursor', Buffer.from(JSON.stringify({ after: idOf(rows[limit - 1]) })).toString('base64url'));
    url.searchParams.set('limit', String(limit));
    reply.header('Link', `<${url.pathname}${url.search}>; rel="next"`);
  }
  return rows;
}

const toPet = (row) => ({
  id: Number(row.id),
  name: row.name,
  categoryId: Number(row.category_id),
  status: row.status,
  createdAt: row.created_at.toISOString(),
  // The mirrored baseline reads the version as the service does (the minimal one does not select it).
  ...(row.version === undefined ? {} : { version: Number(row.version) }),
});

// The probes the overload scenario sends (no key, no database), as the service's /health/live and /health/ready.
app.get('/health/live', async () => ({ status: 'ok' }));
app.get('/health/ready', async () => ({ status: 'ok' }));

/**
 * The service's list statements differ by the filters given (listStatement): the snapshots hold the first pages the
 * bench reads, so the mirrored baseline answers those only (`params`: the first page's).
 */
function firstPageOnly(afterId, params) {
  if (afterId !== null) throw new HttpError(400, 'validation', 'The mirrored baseline answers first pages only.');
  return params;
}

app.get('/categories', async (request, reply) => {
  const { limit, afterId } = page(request.query);
  const { rows } = MINIMAL
    ? await pool.query(
        `SELECT id, name, description FROM categories WHERE ($1::bigint IS NULL OR id > $1) ORDER BY id ASC LIMIT $2`,
        [afterId, limit + 1],
      )
    : await pool.query(SQL.categoriesPage, firstPageOnly(afterId, [limit + 1]));
  return sendPage(
    request,
    reply,
    rows.map((r) => ({
      id: Number(r.id),
      name: r.name,
      ...(r.description === null ? {} : { description: r.description }),
      ...(r.version === undefined ? {} : { version: Number(r.version) }),
    })),
    limit,
    (c) => c.id,
  );
});

app.get('/pets', async (request, reply) => {
  const { limit, afterId } = page(request.query);
  const where = [];
  const params = [];
  if (afterId !== null) where.push(`id > $${params.push(afterId)}`);
  if (request.query.ids !== undefined) {
    const ids = String(request.query.ids).split(',').map(Number);
    if (ids.length > 100 || ids.some((id) => !Number.isSafeInteger(id) || id < 1)) {
      throw new HttpError(400, 'validation', 'bad ids');
    }
    where.push(`id = ANY($${params.push(ids)})`);
  }
  if (request.query.status !== undefined) {
    const statuses = String(request.query.status).split(',');
    if (statuses.some((s) => !['available', 'pending', 'sold'].includes(s))) {
      throw new HttpError(400, 'validation', 'bad status');
    }
    where.push(`status = ANY($${params.push(statuses)})`);
  }
  const { rows } = await pool.query(
    mirroredPetsQuery(where.length, afterId !== null, request.query) ??
      `SELECT id, name, category_id, status, created_at FROM pets ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY id ASC LIMIT $${params.length + 1}`,
    [...params, limit + 1],
  );
  return sendPage(request, reply, rows.map(toPet), limit, (p) => p.id);
});

/** The service's text for the filters the bench uses (ids; status; a cursor and status), else null. */
function mirroredPetsQuery(filters, after, query) {
  if (MINIMAL) return null;
  const ids = query.ids !== undefined;
  const status = query.status !== undefined;
  if (filters === 1 && ids) return SQL.petsByIds;
  if (filters === 1 && status) return SQL.petsByStatus;
  if (filters === 2 && after && status) return SQL.petsByStatusAfter;
  return null;
}

app.get('/pets/:petId', async (request) => {
  const id = Number(request.params.petId);
  if (!Number.isSafeInteger(id) || id < 1) throw new HttpError(400, 'validation', 'bad petId');
  const { rows } = await pool.query(
    MINIMAL ? `SELECT id, name, category_id, status, created_at FROM pets WHERE id = $1 LIMIT 1` : SQL.petById,
    [id],
  );
  if (rows.length === 0) throw new HttpError(404, 'not_found', 'No such pet.');
  return toPet(rows[0]);
});

app.get('/store/inventory', async (request, reply) => {
  const { limit, afterId } = page(request.query);
  const { rows } = MINIMAL
    ? await pool.query(
        `SELECT stock.pet_id, stock.quantity, pet.status FROM stock
           INNER JOIN pets pet ON pet.id = stock.pet_id
          WHERE ($1::bigint IS NULL OR stock.pet_id > $1) ORDER BY stock.pet_id ASC LIMIT $2`,
        [afterId, limit + 1],
      )
    : await pool.query(SQL.inventoryPage, firstPageOnly(afterId, [limit + 1]));
  const levels = rows.map((r) => ({
    petId: Number(r.pet_id),
    quantity: r.quantity,
    status: r.status,
    ...(r.version === undefined ? {} : { version: Number(r.version) }),
  }));
  return sendPage(request, reply, levels, limit, (l) => l.petId);
});

// The service's PlaceOrder, statement for statement: one transaction locking the pet and its stock entry in one
// statement; the order's id from a block of its sequence (the service takes ids before constructing, 50 at a time:
// SequenceBlocks); take the units; the pet becomes pending when the stock reaches 0; the stock entry's update, its
// event (inventory.changed), the order and its event (every change is in the event log, GET /events, whether or not
// anyone subscribes; the service answers "does anyone subscribe?" from memory) held back and sent as one statement
// before the commit (TransactionHost.hold); a pet's status change sends what is held first, then updates the pet
// (and records pet.updated).
const ids = { next: 0, end: 0, sequence: null };
async function nextOrderId(client) {
  if (ids.next >= ids.end) {
    const [row] = (
      ids.sequence === null
        ? await client.query(SQL.orderIdFirstBlock, ['orders'])
        : await client.query(SQL.orderIdNextBlock, [ids.sequence])
    ).rows;
    ids.sequence ??= row.sequence;
    ids.next = Number(row.start);
    ids.end = ids.next + Math.max(1, Number(row.size));
  }
  return ids.next++;
}
app.post('/store/orders', async (request, reply) => {
  const { petId, quantity } = request.body ?? {};
  if (!Number.isSafeInteger(petId) || petId < 1 || !Number.isInteger(quantity) || quantity < 1 || quantity > 1000) {
    throw new HttpError(400, 'validation', 'bad order');
  }
  if (MINIMAL) return placeOrderMinimal(request, reply, petId, quantity);
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const pet = (await client.query(SQL.lockPetAndStock, [petId])).rows[0];
    if (!pet) throw new HttpError(422, 'unknown_pet', 'No such pet.');
    const stock = { quantity: pet.quantity };
    const id = await nextOrderId(client);
    const now = new Date();
    if (pet.status !== 'available') throw new HttpError(409, 'pet_not_available', 'The pet is not available.');
    if (stock.quantity < quantity) throw new HttpError(409, 'insufficient_stock', 'Not enough units.');
    const left = stock.quantity - quantity;
    const at = now.toISOString();
    const order = { id, petId, quantity, complete: false, status: 'placed', createdAt: at, statusChangedAt: at };
    const shown = { ...order, version: 1 };
    const orderRow = [id, petId, request.account.id, quantity, null, 'placed', now, now];
    // The event rows: id, type, subject owner, endpoint (none), body, time.
    const orderEvent = [randomUUID(), 'order.placed', request.account.id, null, event('order.placed', now, shown), now];
    // The stock's event (inventory.changed, for every account: the catalogue's).
    const status = left === 0 ? 'pending' : pet.status;
    // The entry's version counts its quantity's changes and its pet's status's (the database's triggers).
    const level = { petId, quantity: left, status, version: Number(pet.stock_version) + (left === 0 ? 2 : 1) };
    const stockEvent = [randomUUID(), 'inventory.changed', null, null, event('inventory.changed', now, level), now];
    // The stock entry's update must write one row (the service's held-write check).
    const oneRow = 1;
    if (left === 0) {
      const body = { ...toPet(pet), status: 'pending', version: Number(pet.version) + 1 };
      const petEvent = [randomUUID(), 'pet.status_changed', null, null, event('pet.status_changed', now, body), now];
      const updated = [randomUUID(), 'pet.updated', null, null, event('pet.updated', now, body), now];
      await client.query(SQL.stockAndEvent, [petId, left, ...petEvent, oneRow]);
      await client.query(SQL.updatePet, [petId, pet.name, pet.category_id, 'pending']);
      await client.query(SQL.eventsOrderAndEvent, [...updated, ...stockEvent, ...orderRow, ...orderEvent]);
    } else {
      await client.query(SQL.stockOrderAndEvents, [petId, left, ...stockEvent, ...orderRow, ...orderEvent, oneRow]);
    }
    await client.query('COMMIT');
    reply.code(201).header('Location', `/store/orders/${id}`);
    return shown;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
});

// The simplest correct order a user would write: lock the pet and its stock entry in one statement, take the
// units (the pet becomes pending at 0), insert the order with its id from the column default, commit.
async function placeOrderMinimal(request, reply, petId, quantity) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const row = (
      await client.query(
        `SELECT p.status, s.quantity FROM pets p JOIN stock s ON s.pet_id = p.id WHERE p.id = $1 FOR UPDATE`,
        [petId],
      )
    ).rows[0];
    if (!row) throw new HttpError(422, 'unknown_pet', 'No such pet.');
    if (row.status !== 'available') throw new HttpError(409, 'pet_not_available', 'The pet is not available.');
    if (row.quantity < quantity) throw new HttpError(409, 'insufficient_stock', 'Not enough units.');
    const left = row.quantity - quantity;
    await client.query(`UPDATE stock SET quantity = $2 WHERE pet_id = $1`, [petId, left]);
    if (left === 0) await client.query(`UPDATE pets SET status = 'pending' WHERE id = $1`, [petId]);
    const [{ id, created_at: createdAt }] = (
      await client.query(
        `INSERT INTO orders (pet_id, owner_id, quantity, status, complete, status_changed_at)
         VALUES ($1, $2, $3, 'placed', false, now()) RETURNING id, created_at`,
        [petId, request.account.id, quantity],
      )
    ).rows;
    await client.query('COMMIT');
    reply.code(201).header('Location', `/store/orders/${id}`);
    const at = createdAt.toISOString();
    return { id: Number(id), petId, quantity, complete: false, status: 'placed', createdAt: at, statusChangedAt: at };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

// The service's QueueMessage: one transaction inserting the message and its delivery job, with pg-boss's own
// job-insert statement as the service sends it (through pg-boss, on the transaction's connection).
app.post('/messages', async (request, reply) => {
  const text = request.body?.message;
  if (typeof text !== 'string' || text.length < 1 || text.length > 2000) throw new HttpError(400, 'validation', 'bad');
  const id = randomUUID();
  const now = new Date();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(SQL.insertMessage, [id, request.account.id, text, 'queued', now, null]);
    const job = [id, MESSAGE_DELIVERY_QUEUE, { messageId: id }, ...Array(16).fill(null)];
    const { rows } = await client.query(SQL.insertJob, job);
    if (rows.length !== 1) throw new HttpError(500, 'error', 'the job was not queued');
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
  reply.code(202).header('Location', `/messages/${id}`);
  return { id, message: text, status: 'queued', createdAt: now.toISOString() };
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
