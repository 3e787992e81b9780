// Summarises a V8 .cpuprofile (written by `node --cpu-prof`) per benchmark scenario: self time summed by
// function and by package, within the time windows when the bench loaded the service with that scenario.
// V8 stamps samples with the monotonic clock in microseconds, the same clock as process.hrtime() in the
// bench process on Linux, so a scenario's window selects its samples.
// Shares are of the busy time (samples other than "(idle)").
// Also runnable on its own: node tools/bench/profile.mjs <file.cpuprofile> [windows.json [app|raw]]
// (the windows the bench
// saved beside the profile; without them, the whole profile as one summary).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const TOP = Number(process.env.PROFILE_TOP ?? 15);

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

const PSEUDO = new Set(['(garbage collector)', '(idle)', '(program)', '(root)']);

/**
 * For each window's samples ({scenario, from, to} in µs; none = the whole profile): self time (ms) by
 * function and by package (a native frame counts for the package that called it), inclusive time by package
 * (the share of samples with that package anywhere on the stack) and inclusive time of the service's own
 * functions (frames of the built bundle, dist/apps/api/main.js, e.g. the auth guard or a use case).
 */
export function summariseProfile(profile, windows, root) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const times = new Array(profile.samples.length);
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    times[i] = t;
  }
  const selected = windows.length ? windows : [{ scenario: 'whole profile', from: -Infinity, to: Infinity }];
  const byScenario = new Map();
  const maps = () => ({
    functions: new Map(),
    packages: new Map(),
    inclusivePackages: new Map(),
    libraries: new Map(),
    appFunctions: new Map(),
  });
  for (const w of selected) if (!byScenario.has(w.scenario)) byScenario.set(w.scenario, { ...maps(), totalUs: 0 });
  const add = (map, key, us) => map.set(key, (map.get(key) ?? 0) + us);
  for (let i = 0; i < profile.samples.length; i++) {
    const window = selected.find((w) => times[i] >= w.from && times[i] <= w.to);
    if (!window) continue;
    // A sample's self time is the gap to the next sample.
    const us = (times[i + 1] ?? times[i]) - times[i] || 0;
    const acc = byScenario.get(window.scenario);
    const node = nodes.get(profile.samples[i]);
    const frame = node.callFrame;
    const stack = [];
    for (let id = node.id; id !== undefined; id = parent.get(id)) stack.push(nodes.get(id).callFrame);
    const caller = stack.find((f) => f.url);
    let pkg;
    if (frame.url) pkg = packageOf(frame.url, root);
    else if (PSEUDO.has(frame.functionName)) pkg = frame.functionName;
    else pkg = caller ? packageOf(caller.url, root) : '(native/V8)';
    const name =
      frame.url || PSEUDO.has(frame.functionName) || !caller
        ? labelOf(frame, root)
        : `${frame.functionName || '(native)'} [native, from ${packageOf(caller.url, root)}]`;
    add(acc.functions, name, us);
    // The library whose code is running or called into Node core / native code (e.g. pg's socket writes).
    const library = stack.find((f) => f.url && !f.url.startsWith('node:'));
    add(
      acc.libraries,
      PSEUDO.has(frame.functionName) ? frame.functionName : library ? packageOf(library.url, root) : 'node (core)',
      us,
    );
    add(acc.packages, pkg, us);
    for (const p of new Set(stack.filter((f) => f.url).map((f) => packageOf(f.url, root)))) {
      add(acc.inclusivePackages, p, us);
    }
    const own = new Set(stack.filter((f) => f.url.endsWith('dist/apps/api/main.js') && f.functionName));
    for (const f of new Set([...own].map((f) => f.functionName))) add(acc.appFunctions, f, us);
    if (frame.functionName !== '(idle)') acc.totalUs += us;
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
    libraries: top(acc.libraries, acc.totalUs),
    functions: top(acc.functions, acc.totalUs),
    inclusivePackages: top(acc.inclusivePackages, acc.totalUs),
    appFunctions: top(acc.appFunctions, acc.totalUs),
  }));
}

export function formatProfileSummary(summaries) {
  const out = [];
  for (const s of summaries) {
    out.push(`## ${s.scenario} (${s.totalMs} ms busy CPU sampled)`, '', '| self % | ms | package |', '|---|---|---|');
    for (const p of s.packages) out.push(`| ${p.share} | ${p.ms} | ${p.name} |`);
    out.push('', '| self % | ms | library, with the Node core and native work it called |', '|---|---|---|');
    for (const p of s.libraries) out.push(`| ${p.share} | ${p.ms} | ${p.name} |`);
    out.push('', '| self % | ms | function |', '|---|---|---|');
    for (const f of s.functions) out.push(`| ${f.share} | ${f.ms} | ${f.name.replaceAll('|', '\\|')} |`);
    out.push('', '| inclusive % | ms | package on the stack |', '|---|---|---|');
    for (const p of s.inclusivePackages) out.push(`| ${p.share} | ${p.ms} | ${p.name} |`);
    out.push('', '| inclusive % | ms | service function on the stack |', '|---|---|---|');
    for (const f of s.appFunctions) out.push(`| ${f.share} | ${f.ms} | ${f.name} |`);
    out.push('');
  }
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: node tools/bench/profile.mjs <file.cpuprofile>');
  console.log(
    formatProfileSummary(
      summariseProfile(
        JSON.parse(readFileSync(file, 'utf8')),
        process.argv[3]
          ? JSON.parse(readFileSync(process.argv[3], 'utf8')).filter(
              (w) => !process.argv[4] || w.server === process.argv[4],
            )
          : [],
        process.cwd(),
      ),
    ),
  );
}
