#!/bin/sh
# The service as a supervisor (systemd, a CI script, a terminal) runs it: `tools/start.sh` serves the API,
# `tools/start.sh --worker-only` the workers alone (any argument goes to main.js). Its standard output is the
# service's log alone, one JSON object a line: a build, when the sources changed, writes to standard error.
# `npm start` and `npm run worker` run this too, but npm first prints a banner of its own on standard output
# (`> @petstore/source@… start`), which only `--silent` or `loglevel=silent` hides; the latter, in an .npmrc, would
# also hide every npm error and `npm run`'s list of scripts, so the documented command is this one.
# The shell replaces itself with node (`exec`): node receives the supervisor's signals directly.
set -e
cd "$(dirname "$0")/.."
node tools/build-if-stale.mjs
exec node $(node tools/node-flags.mjs) dist/apps/api/main.js "$@"
