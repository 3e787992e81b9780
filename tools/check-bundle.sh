#!/usr/bin/env bash
# What the production image (docker/Dockerfile) runs, proved without a container engine: the pruned bundle
# (dist/apps/api of `nx build api`: main.js, and the package.json and package-lock.json of only what it
# imports at run time, which the build writes: `generatePackageJson` in apps/api/webpack.config.js) copied
# alone into an empty directory, its production dependencies installed there from the registry and the pruned lock
# (`npm install --omit=dev --ignore-scripts`, the image's flags), started as the image starts it (NODE_ENV=production, node dist/apps/api/main.js)
# against the machine's PostgreSQL, in a fresh database that this script creates and drops. It must refuse
# to start without DATABASE_URL, answer /health/ready, and serve authenticated requests, its database URL and
# administrator key read from files (DATABASE_URL_FILE, ADMIN_API_KEY_FILE) as docker/compose.yaml gives them.
# DATABASE_URL's server: TEST_DATABASE_URL's, else postgres://postgres@127.0.0.1:5432.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
export NX_DAEMON=false NX_NO_CLOUD=true

# CI's build step made it; by hand, build it when it is missing.
[ -f dist/apps/api/package-lock.json ] || npx nx build api

work=$(mktemp -d /tmp/petstore-bundle-XXXXXX)
log="$root/tmp/check-bundle.log"
mkdir -p "$root/tmp"
: >"$log"
server=${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}
database="petstore_test_bundle_$$"
database_url=$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(`${u}`)' \
  "$server" "$database")
pid=
sql() { (cd "$root" && node -e '
  const { Client } = require("pg");
  const c = new Client({ connectionString: process.argv[1] });
  const failed = (e) => { console.error(e.message); process.exit(1); };
  c.connect().then(() => c.query(process.argv[2])).then(() => c.end(), failed);
' "$server" "$1"); }
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  sql "DROP DATABASE IF EXISTS $database WITH (FORCE)" || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "check-bundle: $*"
  tail -30 "$log"
  exit 1
}

# The image's layout: /app/dist/apps/api/{main.js,package.json,package-lock.json,node_modules}.
mkdir -p "$work/dist/apps/api"
cp -R dist/apps/api/. "$work/dist/apps/api/"
rm -f "$work/dist/apps/api/main.js.map"
# With the flags of the image's own install (its runtime stage's RUN line), --ignore-scripts among them: no install
# script of a production dependency runs (@scarf/scarf's download analytics), and the bundle must work without them.
install_flags=$(sed -n 's/^RUN cd dist\/apps\/api \&\& npm install \(.*\) \&\& npm cache clean --force$/\1/p' \
  "$root/docker/Dockerfile")
for flag in --omit=dev --ignore-scripts; do
  case " $install_flags " in
  *" $flag "*) ;;
  *) fail "docker/Dockerfile's runtime install has no $flag (its flags: $install_flags)" ;;
  esac
done
# shellcheck disable=SC2086 # the flags are words
(cd "$work/dist/apps/api" && SCARF_ANALYTICS=false npm install $install_flags >>"$log" 2>&1) \
  || fail "npm install $install_flags of the pruned bundle failed"
entries=$(ls "$work/dist/apps/api/node_modules" | wc -l)
echo "check-bundle: production dependencies installed alone in $work ($entries top-level entries)"

cd "$work"
status=0
env -i PATH="$PATH" NODE_ENV=production node dist/apps/api/main.js >>"$log" 2>&1 || status=$?
[ "$status" -ne 0 ] && grep -q 'DATABASE_URL must be set when NODE_ENV=production' "$log" \
  || fail "with NODE_ENV=production and no DATABASE_URL it did not refuse to start (status $status)"
echo "check-bundle: NODE_ENV=production without DATABASE_URL refused with one line"

sql "CREATE DATABASE $database"
free_port='const s = require("net").createServer().listen(0, "127.0.0.1", () => {
  console.log(s.address().port);
  s.close();
});'
port=$(node -e "$free_port")
admin_key="bundle-admin-key-$(node -e "console.log(require('crypto').randomBytes(16).toString('hex'))")"
# NODE_OPTIONS as the image sets it (its ENV line), so the heap ceiling is proved with the bundle.
node_options=$(sed -n 's/^ENV .*NODE_OPTIONS=\([^ ]*\).*$/\1/p' "$root/docker/Dockerfile")
[ -n "$node_options" ] || fail "docker/Dockerfile sets no NODE_OPTIONS"
# And the flags of its CMD line, so the bundle starts as the image starts it.
cmd_flags=$(sed -n 's/^CMD \["node", \(.*\)"dist\/apps\/api\/main.js"\]$/\1/p' "$root/docker/Dockerfile" | tr -d '",')
# The image runs Node 22; a flag this machine's Node does not know (the async context frame, on Node 20) is left out
# here, and said: tools/node22.sh starts the built app with it under Node 22.
image_flags=$cmd_flags
cmd_flags=
for flag in $image_flags; do
  if node "$flag" -e 0 >/dev/null 2>&1; then
    cmd_flags="$cmd_flags $flag"
  else
    echo "check-bundle: $(node --version) does not know $flag (the image's Node 22 does): started without it"
  fi
done
# The secrets as docker/compose.yaml gives them: files named by DATABASE_URL_FILE and ADMIN_API_KEY_FILE.
mkdir -m 700 "$work/secrets"
printf '%s\n' "$database_url" >"$work/secrets/database_url"
printf '%s\n' "$admin_key" >"$work/secrets/admin_api_key"
# shellcheck disable=SC2086 # the flags are words
env -i PATH="$PATH" NODE_ENV=production NODE_OPTIONS="$node_options" DATABASE_URL_FILE="$work/secrets/database_url" \
  PORT="$port" HOST=127.0.0.1 ADMIN_API_KEY_FILE="$work/secrets/admin_api_key" \
  node $cmd_flags dist/apps/api/main.js >>"$log" 2>&1 &
pid=$!
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "the bundle exited during start-up"
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/health/ready" | grep -q '"status":"ok"' \
  || fail "/health/ready did not answer ok"
echo "check-bundle: /health/ready answered ok"
curl -fsS "http://127.0.0.1:$port/accounts/me" -H "Authorization: Bearer $admin_key" | grep -q '"role":"admin"' \
  || fail "GET /accounts/me with the administrator key did not answer the administrator"
key=$(curl -fsS -X POST "http://127.0.0.1:$port/accounts" -H 'Content-Type: application/json' \
  -d '{"name":"Bundle"}' | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>{
    console.log(JSON.parse(s).apiKey.key)})')
curl -fsS "http://127.0.0.1:$port/accounts/me" -H "Authorization: Bearer $key" | grep -q '"name":"Bundle"' \
  || fail "GET /accounts/me with a new customer's key did not answer that customer"
echo "check-bundle: authenticated requests answered (administrator, new customer)"
kill -TERM "$pid"
wait "$pid" || fail "exited with status $? after SIGTERM"
pid=
echo "check-bundle: stopped on SIGTERM"
