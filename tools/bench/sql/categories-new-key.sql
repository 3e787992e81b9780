-- GET /categories?limit=20 with a key this instance has not verified yet (the first request of a run).
-- What the service sends for it, in order (BEGIN and COMMIT left out), named for tools/bench/raw-server.mjs.
-- Written by `npm run bench:sql` (apps/api/test/bench-sql.e2e.spec.ts): do not edit.

-- name: keyByHash
SELECT k.id, k.account_id, k.prefix, k.hash, k.name, k.scopes, k.expires_at,
       k.created_at, k.last_used_at, k.revoked_at, k.bootstrap,
       a.name AS account_name, a.role AS account_role, a.created_at AS account_created_at
  FROM api_keys k JOIN accounts a ON a.id = k.account_id
 WHERE k.hash = $1;

-- name: touchKey
UPDATE api_keys SET last_used_at = $2
  WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2::timestamptz - interval '1 minute');

-- name: categoriesPage
SELECT id, name, description, version FROM categories ORDER BY id LIMIT $1;
