-- POST /store/orders taking the last unit: the pet becomes pending (the hot pet of the bench, at times).
-- What the service sends for it, in order (BEGIN and COMMIT left out), named for tools/bench/raw-server.mjs.
-- Written by `npm run bench:sql` (apps/api/test/bench-sql.e2e.spec.ts): do not edit.

-- name: lockPetAndStock
SELECT p.id, p.name, p.category_id, p.status, p.created_at, p.version, s.quantity,
    s.version AS stock_version
  FROM pets p JOIN stock s ON s.pet_id = p.id WHERE p.id = $1 FOR UPDATE OF p, s;

-- name: stockAndEvent
WITH w0 AS (UPDATE stock SET quantity = $2 WHERE pet_id = $1 RETURNING 1), w1 AS (INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES ($3, $4, $5, $6, $7, $8)) SELECT (SELECT CASE count(*) WHEN $9 THEN 0 ELSE petstore_expect_rows(0, $9, count(*)) END FROM w0) AS w0;

-- name: updatePet
UPDATE pets SET name = $2, category_id = $3, status = $4 WHERE id = $1;

-- name: eventsOrderAndEvent
WITH w0 AS (INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES ($1, $2, $3, $4, $5, $6)), w1 AS (INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES ($7, $8, $9, $10, $11, $12)), w2 AS (INSERT INTO orders (id, pet_id, owner_id, quantity, ship_date, status, complete, created_at,
  status_changed_at) VALUES ($13, $14, $15, $16, $17, $18::text, $18::text = 'completed',
  $19, $20)), w3 AS (INSERT INTO webhook_events (id, type, subject_owner_id, endpoint_id, body, created_at)
       VALUES ($21, $22, $23, $24, $25, $26)) SELECT 1;
