#!/usr/bin/env bash
# Start-up smoke test of `npm start` as a supervisor runs it (no DATABASE_URL, so an embedded PostgreSQL with
# its data in DATA_DIR):
#   1. a start-up failure (bad configuration, port in use, unusable data directory) exits non-zero at once;
#   2. SIGTERM (then SIGINT) to the one `npm start` process stops the server and the embedded PostgreSQL,
#      leaving no process behind;
#   3. a restart on the same data finds it.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=$(mktemp -d /tmp/petstore-smoke-XXXXXX)
chmod 755 "$data_dir" # as root, the embedded PostgreSQL runs as the postgres user, who must enter it
free_port='const s = require("net").createServer().listen(0, "127.0.0.1", () => {
  console.log(s.address().port);
  s.close();
});'
port=$(node -e "$free_port")
log=tmp/smoke.log
mkdir -p tmp
: >"$log"
admin_key="smoke-admin-key-$(node -e "console.log(require('crypto').randomBytes(16).toString('hex'))")"
blocker_pid=
cleanup() {
  [ -n "$blocker_pid" ] && kill "$blocker_pid" 2>/dev/null || true
  rm -rf "$data_dir"
}
trap cleanup EXIT

fail() {
  echo "smoke: $*"
  tail -30 "$log"
  exit 1
}

# Every process whose working directory is the cluster (the postmaster and its children do so).
postgres_on_data_dir() {
  local real p
  real=$(readlink -f "$data_dir/postgres" 2>/dev/null) || return 0
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/cwd" 2>/dev/null)" = "$real" ] && echo "${p#/proc/}"
  done
  return 0
}

# The process and all its descendants.
tree() {
  local child
  echo "$1"
  for child in $(pgrep -P "$1"); do tree "$child"; done
}

# 1. Start-up failures exit non-zero within the bound, with a line saying what is wrong.
start_failure() {
  local what=$1 bound=$2 pattern=$3 status=0
  shift 3
  echo "--- start-up failure: $what" >>"$log"
  env -u DATABASE_URL -u NODE_ENV DATA_DIR="$data_dir" PORT="$port" HOST=127.0.0.1 ADMIN_API_KEY="$admin_key" "$@" \
    timeout -k 5 "$bound" npm start >>"$log" 2>&1 || status=$?
  [ "$status" -ne 0 ] || fail "npm start exited 0 with $what"
  [ "$status" -ne 124 ] && [ "$status" -ne 137 ] \
    || fail "npm start still running ${bound} s after a start-up failure ($what)"
  grep -q "$pattern" "$log" || fail "no line saying \"$pattern\" for $what"
  echo "smoke: $what: exit status $status, with the line the operator needs"
}

# The bounds below are for start-up, not for a build: npm start's own build step first, should it be due.
node tools/build-if-stale.mjs >>"$log" 2>&1 || fail "the build failed"

start_failure "PORT=notaport" 20 'Invalid configuration: PORT' PORT=notaport
start_failure "DATA_DIR a file" 20 'embedded PostgreSQL cannot use /etc/hostname/postgres' DATA_DIR=/etc/hostname
# The port taken by another process: found once the embedded PostgreSQL runs, which must then stop too.
node -e "require('net').createServer().listen($port, '127.0.0.1')" &
blocker_pid=$!
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
start_failure "port $port in use" 90 'EADDRINUSE'
kill "$blocker_pid"
wait "$blocker_pid" 2>/dev/null || true
blocker_pid=
[ -z "$(postgres_on_data_dir)" ] || fail "PostgreSQL still runs on $data_dir after the failed start"
echo "smoke: no PostgreSQL left on the data directory after the failed start"

# 2. and 3. Ready, stopped by a signal to the npm process, nothing left; again on the same data.
start() {
  # Started directly (not through a function), so that $! is the npm process itself.
  env -u DATABASE_URL -u NODE_ENV DATA_DIR="$data_dir" PORT="$port" HOST=127.0.0.1 ADMIN_API_KEY="$admin_key" \
    "$@" npm start >>"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 240); do
    if curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1; then return 0; fi
    kill -0 "$pid" 2>/dev/null || fail "npm start exited during start-up"
    sleep 0.5
  done
  fail "not ready after 120 s"
}

stop() {
  local signal=$1 expected=${2:-0} processes left status=0
  processes=$(tree "$pid")
  [ -n "$(postgres_on_data_dir)" ] || fail "no PostgreSQL runs on $data_dir while the service is up"
  kill "-$signal" "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && fail "npm start still running 30 s after SIG$signal"
  wait "$pid" || status=$?
  [ "$status" -eq "$expected" ] || fail "npm start exited with status $status after SIG$signal, not $expected"
  # (after an exit at the deadline, PostgreSQL finishes its fast shutdown on its own: a moment)
  for _ in $(seq 1 20); do [ -z "$(postgres_on_data_dir)" ] && break; sleep 0.5; done
  left=$(for p in $processes; do kill -0 "$p" 2>/dev/null && ps -o pid=,args= -p "$p"; done || true)
  [ -z "$left" ] || fail "processes left after SIG$signal: $left"
  [ -z "$(postgres_on_data_dir)" ] || fail "PostgreSQL still runs on $data_dir after SIG$signal"
  echo "smoke: SIG$signal to npm start (pid $pid) stopped all $(echo "$processes" | wc -l) processes of its tree"
}

start
echo "smoke: ready on port $port with an embedded PostgreSQL in $data_dir"
curl -fsS "http://127.0.0.1:$port/openapi.json" -o /dev/null
curl -fsS -X POST "http://127.0.0.1:$port/categories" -H "Authorization: Bearer $admin_key" \
  -H 'Content-Type: application/json' -d '{"name":"Smoke"}' >/dev/null
stop TERM
start
curl -fsS "http://127.0.0.1:$port/categories" -H "Authorization: Bearer $admin_key" | grep -q '"name":"Smoke"' \
  || fail "the data did not survive the restart"
echo "smoke: restarted on the same data and found it"
stop INT

# 4. A request that does not finish (its table is locked): the drain gives up at SHUTDOWN_TIMEOUT_MS and the
#    process exits anyway (within SHUTDOWN_TIMEOUT_MS), with status 1, still leaving no process behind.
# The stuck request must still be stuck at the deadline however slow the host (the statement timeout, 5 s by
# default, answered it 503 first when a loaded CI host took 5 s from the request to the SIGTERM).
start SHUTDOWN_TIMEOUT_MS=2000 DB_STATEMENT_TIMEOUT_MS=60000 DB_QUERY_TIMEOUT_MS=61000
locker_out=$(mktemp)
node -e '
  const fs = require("fs");
  const [dir] = process.argv.slice(1);
  const port = Number(fs.readFileSync(dir + "/postmaster.pid", "utf8").split("\n")[3]);
  const password = fs.readFileSync(dir + "/superuser.password", "utf8").trim();
  const c = new (require("pg").Client)({ host: "127.0.0.1", port, user: "postgres", password, database: "petstore" });
  const waiting = "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = $1";
  (async () => {
    await c.connect();
    await c.query("BEGIN");
    await c.query("LOCK TABLE categories IN ACCESS EXCLUSIVE MODE");
    console.log("locked");
    while ((await c.query(waiting, ["Lock"])).rows[0].n === 0) await new Promise((r) => setTimeout(r, 100));
    console.log("waiting");
    await new Promise((r) => setTimeout(r, 120000));
  })().catch(() => process.exit(0)); // the server going away ends it
' "$data_dir/postgres" >"$locker_out" 2>&1 &
locker_pid=$!
for _ in $(seq 1 100); do grep -q locked "$locker_out" && break; sleep 0.1; done
curl -sS -m 120 "http://127.0.0.1:$port/categories" -H "Authorization: Bearer $admin_key" >/dev/null 2>&1 &
curl_pid=$!
for _ in $(seq 1 100); do grep -q waiting "$locker_out" && break; sleep 0.1; done
grep -q waiting "$locker_out" || fail "the request never waited for the locked table: $(cat "$locker_out")"
stop TERM 1
grep -q 'SHUTDOWN_TIMEOUT_MS): cut off' "$log" || fail "no line about the requests cut off at the deadline"
echo "smoke: with a request stuck in flight, SHUTDOWN_TIMEOUT_MS=2000 ended the drain; exit status 1, nothing left"
kill "$locker_pid" "$curl_pid" 2>/dev/null || true
wait "$locker_pid" "$curl_pid" 2>/dev/null || true
rm -f "$locker_out"
