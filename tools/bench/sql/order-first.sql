-- POST /store/orders, the process's first order: the order sequence's first block, and the first question whether anyone subscribes to order.placed (the bench's later orders find the answer in memory).
-- What the service sends for it, in order (BEGIN and COMMIT left out), named for tools/bench/raw-server.mjs.
-- Written by `npm run bench:sql` (apps/api/test/bench-sql.e2e.spec.ts): do not edit.

-- name: lockPetAndStock
SELECT p.id, p.name, p.category_id, p.status, p.created_at, p.version, s.quantity,
    s.version AS stock_version
  FROM pets p JOIN stock s ON s.pet_id = p.id WHERE p.id = $1 FOR UPDATE OF p, s;

-- name: orderIdFirstBlock
SELECT nextval(s.id) AS start, q.seqincrement AS size, s.id::text AS sequence
  FROM (SELECT pg_get_serial_sequence($1, 'id')::regclass AS id) s JOIN pg_sequence q ON q.seqrelid = s.id;

-- name: stockOrderAndEvents
WITH w0 AS (UPDATE stock SET quantity = $2 WHERE pet_id = $1 RETURNING 1), w1 AS (INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES ($3, $4, $5, $6, $7, $8)), w2 AS (INSERT INTO orders (id, pet_id, owner_id, quantity, ship_date, status, complete, created_at,
  status_changed_at) VALUES ($9, $10, $11, $12, $13, $14::text, $14::text = 'completed',
  $15, $16)), w3 AS (INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES ($17, $18, $19, $20, $21, $22)) SELECT (SELECT CASE count(*) WHEN $23 THEN 0 ELSE petstore_expect_rows(0, $23, count(*)) END FROM w0) AS w0;

-- name: subscribersOf
SELECT EXISTS (
  SELECT 1 FROM webhook_endpoints e JOIN accounts a ON a.id = e.owner_id
  WHERE $1 = ANY (e.events) AND e.disabled_at IS NULL AND ($3::boolean OR e.owner_id = $2 OR a.role = 'admin'))
  AS found;
