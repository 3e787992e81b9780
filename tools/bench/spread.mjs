#!/usr/bin/env node
// The spread of several bench runs, and the performance targets judged over them.
//
//   node tools/bench/spread.mjs tmp/bench/2026-11-25-run1.json tmp/bench/2026-11-25-run2.json ...
//
// One run is one sample: on a 2-core virtual machine the same code's ratios move by up to 0.3 between runs. The
// targets are therefore judged over the runs, as the performance issue states them: the throughput targets (every
// read, orders) in at least two of three runs (generally: a majority), the others (p99, memory, ...) in every run.
// Each run's verdicts are its own (`targets` in its JSON, computed by run.mjs); this only counts them.
// Prints markdown.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node tools/bench/spread.mjs <result.json> [<result.json> ...]');
  process.exit(2);
}
const runs = files.map((file) => ({ label: basename(file, '.json'), report: JSON.parse(readFileSync(file, 'utf8')) }));
const majority = Math.floor(runs.length / 2) + 1;

const keys = [];
for (const { report } of runs) for (const s of report.scenarios) if (!keys.includes(s.key)) keys.push(s.key);
const nameOf = (key) => runs.map((r) => r.report.scenarios.find((s) => s.key === key)).find(Boolean).name;
const valuesOf = (key, field) =>
  runs.map((r) => r.report.scenarios.find((s) => s.key === key)?.[field]).filter((v) => typeof v === 'number');

const each = (values) => (values.length ? values.join(' / ') : '–');

const lines = [];
const latest = runs[runs.length - 1];
const reqPerSec = (key) => {
  const results = latest.report.scenarios.find((s) => s.key === key)?.results ?? {};
  return ['app', 'app-info', 'minimal'].map((server) => results[server]?.reqPerSec ?? '–').join(' / ');
};
lines.push(`Runs: ${runs.map((r) => `\`${r.label}\``).join(', ')} (${runs.length}); req/s of the last one.`, '');
lines.push(
  '| scenario | req/s app / app-info / minimal | ratio warn, each run | ratio info, each run | ' +
    'p99 ratio warn, each run | p99 ratio info, each run |',
  '|---|---|---|---|---|---|',
);
for (const key of keys) {
  const cells = ['ratio', 'ratioInfo', 'p99Ratio', 'p99RatioInfo'].map((f) => each(valuesOf(key, f)));
  lines.push(`| ${nameOf(key)} | ${reqPerSec(key)} | ${cells.join(' | ')} |`);
}
const rssOf = (report) =>
  Object.entries(report.memory ?? {})
    .map(([server, m]) => [server, m?.rssAfterMb])
    .filter(([, v]) => typeof v === 'number');
const memory = runs.map((r) => rssOf(r.report).map(([server, v]) => `${server} ${v} MB`));
const memoryText = memory.map((m) => (m.length ? m.join(', ') : 'not measured')).join('; ');
lines.push('', `RSS after load, per run (each service instance): ${memoryText}.`, '');

// A target over runs, by its name in each run's `targets`: met by enough of the runs that measured it in all.
const THROUGHPUT = /^(every read|orders) ≥/;
const names = [];
for (const { report } of runs)
  for (const t of report.targets ?? []) if (!names.includes(t.target)) names.push(t.target);
lines.push('| target | met | runs |', '|---|---|---|');
for (const name of names) {
  const verdicts = runs.map((r) => (r.report.targets ?? []).find((t) => t.target === name));
  const measured = verdicts.filter((v) => v && v.met !== null);
  const passed = measured.filter((v) => v.met).length;
  const needed = THROUGHPUT.test(name) ? majority : runs.length;
  const met = measured.length === runs.length && passed >= needed;
  const detail = verdicts
    .map(
      (v, i) =>
        `${runs[i].label}: ${v && v.met !== null ? `${v.met ? 'met' : 'NOT met'} (${v.measured})` : 'not measured'}`,
    )
    .join('; ');
  lines.push(
    `| ${name} | ${met ? 'yes' : '**no**'} | ${passed} of ${runs.length} runs (needs ${needed}) — ${detail} |`,
  );
}
console.log(lines.join('\n'));
