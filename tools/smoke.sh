#!/usr/bin/env bash
# Start-up smoke test of the built service as a user runs it: no DATABASE_URL, so an
# embedded PostgreSQL with its data in DATA_DIR; ready, data written, SIGTERM stops it
# cleanly; a second start finds the data again. Leaves the served OpenAPI in tmp/.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=$(mktemp -d /tmp/petstore-smoke-XXXXXX)
chmod 755 "$data_dir" # as root, the embedded PostgreSQL runs as the postgres user, who must enter it
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
log=tmp/smoke.log
mkdir -p tmp
admin_key="smoke-admin-key-$(node -e "console.log(require('crypto').randomBytes(16).toString('hex'))")"

start() {
  env -u DATABASE_URL DATA_DIR="$data_dir" PORT="$port" HOST=127.0.0.1 ADMIN_API_KEY="$admin_key" \
    node dist/apps/api/main.js >>"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "smoke: the service exited during start-up"; tail -30 "$log"; exit 1; }
    sleep 0.5
  done
  echo "smoke: not ready after 60 s"; tail -30 "$log"; exit 1
}

stop() {
  kill -TERM "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then echo "smoke: still running 30 s after SIGTERM"; kill -9 "$pid"; exit 1; fi
  wait "$pid" || { echo "smoke: exited non-zero after SIGTERM"; tail -30 "$log"; exit 1; }
}

: >"$log"
start
echo "smoke: ready on port $port with an embedded PostgreSQL in $data_dir"
curl -fsS "http://127.0.0.1:$port/openapi.json" -o tmp/openapi.json
curl -fsS -X POST "http://127.0.0.1:$port/categories" -H "Authorization: Bearer $admin_key" \
  -H 'Content-Type: application/json' -d '{"name":"Smoke"}' >/dev/null
stop
echo "smoke: stopped cleanly on SIGTERM"
start
curl -fsS "http://127.0.0.1:$port/categories" -H "Authorization: Bearer $admin_key" | grep -q '"name":"Smoke"' \
  || { echo "smoke: the data did not survive the restart"; exit 1; }
stop
echo "smoke: restarted on the same data and found it"
rm -rf "$data_dir"
