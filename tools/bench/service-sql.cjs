// The service's own statements for the requests the bench measures, as the `mirrored` baseline (raw-server.mjs) sends
// them: snapshots in tools/bench/sql/, one file per request, each statement under its name, in the order the service
// sends them. Nobody writes them by hand: apps/api/test/bench-sql.e2e.spec.ts serves those requests with the service,
// records what it sends, and fails while a file differs; `npm run bench:sql` writes them afresh.
// CommonJS, so that both raw-server.mjs (ESM) and the jest spec (CommonJS) load it as it is.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');

const SQL_DIR = join(__dirname, 'sql');
const NAME = /^-- name: ([A-Za-z][A-Za-z0-9]*)\n/gm;

/**
 * A snapshot file's text: `header` (lines of prose, each written as an SQL comment), then each statement under its
 * `-- name:` line, exactly as sent, ended by `;`.
 */
function formatStatements(header, statements) {
  const comment = header
    .trimEnd()
    .split('\n')
    .map((line) => `-- ${line}`.trimEnd())
    .join('\n');
  const blocks = statements.map(({ name, text }) => `-- name: ${name}\n${text};\n`);
  return `${comment}\n\n${blocks.join('\n')}`;
}

/** The statements of a snapshot file's text, in order: `{ name, text }`, each text exactly as it was recorded. */
function parseStatements(source) {
  const marks = [...source.matchAll(NAME)];
  return marks.map((mark, i) => {
    const start = mark.index + mark[0].length;
    const end = i + 1 < marks.length ? marks[i + 1].index - 1 : source.length;
    const block = source.slice(start, end);
    if (!block.endsWith(';\n')) throw new Error(`The statement ${mark[1]} does not end with ";" and a new line.`);
    return { name: mark[1], text: block.slice(0, -2) };
  });
}

/**
 * Every statement of the snapshots, by name (a name in several files has one text in all of them); reading a name
 * that no snapshot has throws, so the baseline cannot send `undefined`.
 */
function readStatements(dir = SQL_DIR) {
  const byName = new Map();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.sql'))) {
    for (const { name, text } of parseStatements(readFileSync(join(dir, file), 'utf8'))) {
      if (byName.has(name) && byName.get(name) !== text) throw new Error(`${file}: ${name} differs from elsewhere`);
      byName.set(name, text);
    }
  }
  return new Proxy(Object.fromEntries(byName), {
    get(statements, name) {
      if (typeof name === 'string' && !(name in statements)) {
        throw new Error(`No statement ${name} in tools/bench/sql: npm run bench:sql writes them from the service.`);
      }
      return statements[name];
    },
  });
}

module.exports = { SQL_DIR, formatStatements, parseStatements, readStatements };
