-- GET /store/inventory.
-- What the service sends for it, in order (BEGIN and COMMIT left out), named for tools/bench/raw-server.mjs.
-- Written by `npm run bench:sql` (apps/api/test/bench-sql.e2e.spec.ts): do not edit.

-- name: inventoryPage
SELECT stock.pet_id, stock.quantity, pet.status, stock.version
  FROM stock INNER JOIN pets pet ON pet.id = stock.pet_id ORDER BY stock.pet_id LIMIT $1;
