import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

export { onPath } from './on-path';

/** What deploy/ ships for Prometheus and Grafana, and the runbook their alerts point at. */
const ROOT = resolve(__dirname, '../../../..');
export const RULES_FILE = join(ROOT, 'deploy/prometheus/petstore.rules.yml');
export const RULES_TEST_FILE = join(ROOT, 'deploy/prometheus/petstore.rules.test.yml');
export const DASHBOARD_FILE = join(ROOT, 'deploy/grafana/petstore-api.json');
export const RUNBOOK_FILE = join(ROOT, 'docs/runbook.md');
export const REPOSITORY_ROOT = ROOT;

export interface RecordingRule {
  record: string;
  expr: string;
}

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export type Rule = RecordingRule | AlertingRule;

export interface RuleFile {
  groups: Array<{ name: string; interval?: string; rules: Rule[] }>;
}

export function readRules(): RuleFile {
  return parse(readFileSync(RULES_FILE, 'utf8')) as RuleFile;
}

export function recordingRules(rules = readRules()): RecordingRule[] {
  return rules.groups.flatMap((group) => group.rules).filter((rule): rule is RecordingRule => 'record' in rule);
}

export function alertingRules(rules = readRules()): AlertingRule[] {
  return rules.groups.flatMap((group) => group.rules).filter((rule): rule is AlertingRule => 'alert' in rule);
}

interface Panel {
  title: string;
  type: string;
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}

/**
 * Every PromQL expression of the dashboard's panels, as Prometheus would get it: Grafana's `$__rate_interval` is
 * replaced by `interval` (Grafana picks at least four scrape intervals).
 */
export function dashboardExpressions(interval = '1m'): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as { panels: Panel[] };
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  return panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      panel: panel.title,
      expr: target.expr.replaceAll('$__rate_interval', interval),
    })),
  );
}

/** PromQL's words that are not metric names: operators and modifiers (functions are told by their parenthesis). */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects. Hand-written, for the expressions of this repository: no PromQL
 * parser is among the project's packages (Prometheus' own is Go; its JavaScript one, @prometheus-io/lezer-promql,
 * is not a dependency). String literals, label matchers, ranges and the label lists of `by`, `without`, `on`,
 * `ignoring`, `group_left` and `group_right` are removed first; what is left is names, numbers and functions,
 * and a function is a name followed by `(`. A mistake here shows as a name the service does not export, which
 * fails the test that uses it, never as one passed.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+\S+/g, ' ');
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[A-Za-z_:][\w:]*|\d[\w.]*/g)) {
    const token = match[0];
    if (/^\d/.test(token) || KEYWORDS.has(token.toLowerCase())) continue;
    const next = stripped.slice(match.index + token.length).trimStart()[0];
    if (next === '(') continue; // a function (or an aggregation)
    names.add(token);
  }
  return [...names];
}

/**
 * The series names a scrape of the service lists: each `# TYPE` line (every registered metric has one, with or
 * without samples yet), a histogram as its `_bucket`, `_sum` and `_count`, a summary as itself, `_sum` and `_count`.
 */
export function exportedNames(scrape: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(name + suffix);
    else if (type === 'summary') for (const suffix of ['', '_sum', '_count']) names.add(name + suffix);
    else names.add(name);
  }
  return names;
}

/**
 * The anchors of a Markdown file's headings, as GitHub makes them: lower case, punctuation but `-` and `_` removed,
 * spaces as `-` (the runbook's alert headings are bare alert names, so their anchor is the name in lower case).
 */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  for (const [, heading] of markdown.matchAll(/^#{1,6} (.+)$/gm)) {
    anchors.add(
      heading
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-'),
    );
  }
  return anchors;
}

/** Runs promtool; its output, and whether it exited 0. */
export function promtool(binary: string, args: string[], cwd = ROOT): { ok: boolean; output: string } {
  try {
    const output = execFileSync(binary, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, output };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}
