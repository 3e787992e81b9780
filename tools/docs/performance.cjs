// README.md's performance table, written from the reports of the runs it cites (bench/results/<series>N.md, the
// reports `npm run bench` writes): per scenario, the last run's req/s and every run's ratios against the minimal
// handler, then which targets the runs met. `npm run docs` writes it; apps/api/test/docs-generated.spec.ts fails
// while README.md's differs. To cite other runs, copy their reports into bench/results and change README_SERIES.
const { readdirSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { wrap } = require('./sections.cjs');

const ROOT = join(__dirname, '../..');
/** The runs README.md cites: bench/results/<this>1.md, 2.md, … */
const README_SERIES = '2026-11-25-evening-run';

/** The rows of the first Markdown table after `heading` (or of the first table), as objects by column. */
function table(report, heading) {
  const from = heading ? report.indexOf(heading) : 0;
  if (from === -1) throw new Error(`No "${heading}" in the report.`);
  const lines = report.slice(from).split('\n');
  const start = lines.findIndex((line) => line.startsWith('| '));
  const rows = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('|')) break;
    rows.push(
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
  }
  const [columns, , ...body] = rows;
  return body.map((cells) => Object.fromEntries(columns.map((column, i) => [column, cells[i] ?? ''])));
}

/** A report's first line starting with `label: `, up to the first of `stops`. */
function line(report, label, stops) {
  const found = report.split('\n').find((text) => text.startsWith(`${label}: `));
  if (!found) throw new Error(`No "${label}:" line in the report.`);
  let text = found.slice(label.length + 2);
  for (const stop of stops) text = text.split(stop)[0];
  return text.trim();
}

/** The files of a series, in order: `<series>1.md`, `<series>2.md`, … */
function seriesFiles(series = README_SERIES, dir = join(ROOT, 'bench/results')) {
  const runs = readdirSync(dir).filter(
    (name) => name.startsWith(series) && /^\d+\.md$/.test(name.slice(series.length)),
  );
  return runs.sort((a, b) => Number(a.slice(series.length, -3)) - Number(b.slice(series.length, -3)));
}

/** The body of README.md's `performance` section, from the reports of `series`. */
function performanceSection(series = README_SERIES, dir = join(ROOT, 'bench/results')) {
  const files = seriesFiles(series, dir);
  if (files.length === 0) throw new Error(`No report bench/results/${series}1.md`);
  const reports = files.map((file) => readFileSync(join(dir, file), 'utf8'));
  const runs = reports.map((report) => table(report));
  const latest = runs[runs.length - 1];
  const each = (scenario, pick) =>
    runs.map((rows) => pick(rows.find((row) => row.scenario === scenario) ?? {}) ?? '?').join(' / ');
  const p99 = (row, i) => row['p99 ratio warn / info']?.split(' / ')[i];
  const rows = latest.map((row) => {
    const rates = [row['app req/s'], row['app-info req/s'], row['minimal req/s']].join(' / ');
    const cells = [
      each(row.scenario, (r) => r['ratio warn']),
      each(row.scenario, (r) => r['ratio info']),
      each(row.scenario, (r) => p99(r, 0)),
      each(row.scenario, (r) => p99(r, 1)),
    ];
    return `| ${row.scenario} | ${rates} | ${cells.join(' | ')} |`;
  });

  const targets = reports.map((report) => table(report, '## Targets'));
  const everyRun = [];
  const someRuns = [];
  for (const { target } of targets[0]) {
    const results = targets.map((rows) => rows.find((row) => row.target === target));
    const met = results.filter((row) => row?.met === 'yes').length;
    if (met === runs.length) everyRun.push(target);
    else
      someRuns.push(`${target}: ${met} of ${runs.length} (${results.map((row) => row?.measured ?? '?').join(', ')})`);
  }
  const machine = line(reports[0], 'Machine', [', load average']);
  const configuration = line(reports[0], 'Configuration', [' (app', ', 1,000,000 API keys']);
  const first = `bench/results/${files[0]}`;
  const tail = series.slice(series.lastIndexOf('-'));
  const last = files.length > 1 ? ` to \`${tail}${files[files.length - 1].slice(series.length)}\`` : '';
  return [
    '<!-- Written from the reports of the runs it cites by `npm run docs` (tools/docs/performance.cjs). -->',
    '',
    wrap(
      `${files.length} runs (\`${first}\`${last}) on ${machine}, shared by the servers, PostgreSQL and the load ` +
        `generator; ${configuration}. As service ÷ minimal, one value per run (req/s of the last run):`,
    ),
    '',
    '| scenario | req/s app / app-info / minimal | ratio warn, each run | ratio info, each run | ' +
      'p99 ratio warn, each run | p99 ratio info, each run |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    wrap(
      [
        `Met in every run: ${everyRun.join('; ')}.`,
        ...(someRuns.length ? [`Not in every run: ${someRuns.join('; ')}.`] : []),
      ].join(' '),
    ),
  ].join('\n');
}

module.exports = { README_SERIES, performanceSection, seriesFiles, table };
