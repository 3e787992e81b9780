// The statements the `mirrored` baseline of the bench (raw-server.mjs) sends: the service's own texts, parameter for
// parameter, for the routes the bench measures. apps/api/test/bench-mirrored-sql.e2e.spec.ts serves those requests
// with the service and fails when one of these is not among the statements the service sent: change the
// repositories' SQL, and this file (and raw-server.mjs's parameters) must follow.
// CommonJS, so that both raw-server.mjs (ESM) and the jest spec (CommonJS) load it as it is.

const PET_COLUMNS = 'SELECT id, name, category_id, status, created_at, version FROM pets';
const ORDER_INSERT = `INSERT INTO orders (id, pet_id, owner_id, quantity, ship_date, status, complete, created_at,
  status_changed_at)`;
const EVENT_INSERT = 'INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)';

module.exports = {
  // The API key check (a key not yet cached), then its last use, at most once a minute.
  keyByHash: `SELECT k.id, k.account_id, k.prefix, k.hash, k.name, k.scopes, k.expires_at,
       k.created_at, k.last_used_at, k.revoked_at, k.bootstrap,
       a.name AS account_name, a.role AS account_role, a.created_at AS account_created_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
 WHERE k.hash = $1`,
  touchKey: `UPDATE api_keys SET last_used_at = $2
        WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute')`,
  categoriesPage: `SELECT id, name, description, version FROM categories WHERE ($1::bigint IS NULL OR id > $1)
  ORDER BY id LIMIT $2`,
  petsByIds: `${PET_COLUMNS} WHERE id = ANY($1) ORDER BY id LIMIT $2`,
  petById: `${PET_COLUMNS} WHERE id = $1`,
  petsByStatus: `${PET_COLUMNS} WHERE status = ANY($1) ORDER BY id LIMIT $2`,
  petsByStatusAfter: `${PET_COLUMNS} WHERE id > $1 AND status = ANY($2) ORDER BY id LIMIT $3`,
  inventoryPage: `SELECT stock.pet_id, stock.quantity, pet.status, stock.version
  FROM stock INNER JOIN pets pet ON pet.id = stock.pet_id WHERE ($1::bigint IS NULL OR stock.pet_id > $1) AND
  ($2::varchar[] IS NULL OR pet.status = ANY($2)) ORDER BY stock.pet_id LIMIT $3`,
  // An order: the pet and its stock entry locked, an id from the order sequence's block, then the held writes as
  // one statement (TransactionHost.hold): the stock entry (its row count checked), its event, the order, its event.
  lockPetAndStock: `SELECT p.id, p.name, p.category_id, p.status, p.created_at, p.version, s.quantity,
    s.version AS stock_version
  FROM pets p JOIN stock s ON s.pet_id = p.id WHERE p.id = $1 FOR UPDATE OF p, s`,
  // The order's id: the first block resolves the sequence and its increment (50), a later one reads it again.
  orderIdFirstBlock: `SELECT nextval(s.id) AS start, q.seqincrement AS size, s.id::text AS sequence
  FROM (SELECT pg_get_serial_sequence($1, 'id')::regclass AS id) s JOIN pg_sequence q ON q.seqrelid = s.id`,
  orderIdNextBlock: `SELECT nextval($1::regclass) AS start, q.seqincrement AS size
  FROM pg_sequence q WHERE q.seqrelid = $1::regclass`,
  // The stock entry (its row count checked), its inventory.changed, the order, its order.placed.
  stockOrderAndEvents: `WITH w0 AS (UPDATE stock SET quantity = $2 WHERE pet_id = $1 RETURNING 1), w1 AS
  (${EVENT_INSERT} VALUES ($3, $4, $5, $6, $7, $8)), w2 AS (${ORDER_INSERT} VALUES ($9, $10, $11, $12, $13, $14::text,
  $14::text = 'completed', $15, $16)), w3 AS (${EVENT_INSERT}
       VALUES ($17, $18, $19, $20, $21, $22)) SELECT (SELECT CASE count(*) WHEN $23 THEN 0 ELSE
  petstore_expect_rows(0, $23, count(*)) END FROM w0) AS w0`,
  // The last unit: the stock entry and the pet's status event, then the pet (pending), then the pet's and the
  // stock's events, the order and its event.
  stockAndEvent: `WITH w0 AS (UPDATE stock SET quantity = $2 WHERE pet_id = $1 RETURNING 1), w1 AS (${EVENT_INSERT}
       VALUES ($3, $4, $5, $6, $7, $8)) SELECT (SELECT CASE count(*) WHEN $9 THEN 0 ELSE petstore_expect_rows(0, $9,
  count(*)) END FROM w0) AS w0`,
  updatePet: 'UPDATE pets SET name = $2, category_id = $3, status = $4 WHERE id = $1',
  eventsOrderAndEvent: `WITH w0 AS (${EVENT_INSERT} VALUES ($1, $2, $3, $4, $5, $6)), w1 AS (${EVENT_INSERT}
       VALUES ($7, $8, $9, $10, $11, $12)), w2 AS (${ORDER_INSERT} VALUES ($13, $14, $15, $16, $17, $18::text,
  $18::text = 'completed', $19, $20)), w3 AS (${EVENT_INSERT}
       VALUES ($21, $22, $23, $24, $25, $26)) SELECT 1`,
  insertMessage: `INSERT INTO messages (id, owner_id, body, status, created_at, delivered_at, attempts, last_error)
  VALUES ($1, $2, $3, $4, $5, $6, 0, NULL)`,
};
