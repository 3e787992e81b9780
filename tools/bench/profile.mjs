// Summarises a V8 .cpuprofile (written by `node --cpu-prof`) per benchmark scenario: self time summed by
// function and by package, within the time windows when the bench loaded the service with that scenario.
// V8 stamps samples with the monotonic clock in microseconds, the same clock as process.hrtime() in the
// bench process on Linux, so a scenario's window selects its samples.
// Also runnable on its own: node tools/bench/profile.mjs <file.cpuprofile> (whole profile, one summary).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TOP = 15;

function packageOf(url, root) {
  if (!url) return '(native/V8)';
  if (url.startsWith('node:')) return 'node (core)';
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = path.slice(modules + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (root && path.startsWith(root)) return path.slice(root.length + 1);
  return path;
}

function labelOf(frame, root) {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  const where = packageOf(frame.url, root);
  const file = frame.url.split('/').pop();
  return `${name} (${where === file ? file : `${where}:${file}`}:${frame.lineNumber + 1})`;
}

/** Self time (ms) by function and by package for each window's samples; windows: {scenario, from, to} in µs. */
export function summariseProfile(profile, windows, root) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const times = new Array(profile.samples.length);
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    times[i] = t;
  }
  const selected = windows.length
    ? windows
    : [{ scenario: 'whole profile', from: -Infinity, to: Infinity }];
  const byScenario = new Map();
  for (const w of selected) {
    if (!byScenario.has(w.scenario))
      byScenario.set(w.scenario, {
        functions: new Map(),
        packages: new Map(),
        totalUs: 0,
      });
  }
  for (let i = 0; i < profile.samples.length; i++) {
    const window = selected.find((w) => times[i] >= w.from && times[i] <= w.to);
    if (!window) continue;
    // A sample's self time is the gap to the next sample (the last one gets the mean gap of 1 tick).
    const us = (times[i + 1] ?? times[i]) - times[i] || 0;
    const node = nodes.get(profile.samples[i]);
    const acc = byScenario.get(window.scenario);
    const fn = labelOf(node.callFrame, root);
    const pkg = node.callFrame.url
      ? packageOf(node.callFrame.url, root)
      : node.callFrame.functionName || '(native/V8)';
    acc.functions.set(fn, (acc.functions.get(fn) ?? 0) + us);
    acc.packages.set(pkg, (acc.packages.get(pkg) ?? 0) + us);
    acc.totalUs += us;
  }
  const top = (map, total) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([name, us]) => ({
        name,
        ms: Math.round(us / 1000),
        share: +((100 * us) / Math.max(total, 1)).toFixed(1),
      }));
  return [...byScenario.entries()].map(([scenario, acc]) => ({
    scenario,
    totalMs: Math.round(acc.totalUs / 1000),
    packages: top(acc.packages, acc.totalUs),
    functions: top(acc.functions, acc.totalUs),
  }));
}

export function formatProfileSummary(summaries) {
  const out = [];
  for (const s of summaries) {
    out.push(
      `## ${s.scenario} (${s.totalMs} ms sampled)`,
      '',
      '| self % | ms | package |',
      '|---|---|---|',
    );
    for (const p of s.packages)
      out.push(`| ${p.share} | ${p.ms} | ${p.name} |`);
    out.push('', '| self % | ms | function |', '|---|---|---|');
    for (const f of s.functions)
      out.push(`| ${f.share} | ${f.ms} | ${f.name.replaceAll('|', '\\|')} |`);
    out.push('');
  }
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file)
    throw new Error('usage: node tools/bench/profile.mjs <file.cpuprofile>');
  console.log(
    formatProfileSummary(
      summariseProfile(
        JSON.parse(readFileSync(file, 'utf8')),
        [],
        process.cwd(),
      ),
    ),
  );
}
