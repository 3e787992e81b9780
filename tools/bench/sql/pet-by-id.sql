-- GET /pets/{petId}.
-- What the service sends for it, in order (BEGIN and COMMIT left out), named for tools/bench/raw-server.mjs.
-- Written by `npm run bench:sql` (apps/api/test/bench-sql.e2e.spec.ts): do not edit.

-- name: petById
SELECT id, name, category_id, status, created_at, version FROM pets WHERE id = $1;
