-- GET /pets?ids=….
-- What the service sends for it, in order (BEGIN and COMMIT left out), named for tools/bench/raw-server.mjs.
-- Written by `npm run bench:sql` (apps/api/test/bench-sql.e2e.spec.ts): do not edit.

-- name: petsByIds
SELECT id, name, category_id, status, created_at, version FROM pets WHERE id = ANY($1) ORDER BY id LIMIT $2;
