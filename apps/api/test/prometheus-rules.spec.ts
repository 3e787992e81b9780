import { readFileSync } from 'node:fs';
import { ADMIN_KEY, TestApp } from './support/test-app';
import {
  alertingRules,
  dashboardExpressions,
  exportedNames,
  headingAnchors,
  metricNames,
  onPath,
  promtool,
  recordingRules,
  RULES_FILE,
  RULES_TEST_FILE,
  RUNBOOK_FILE,
} from './support/prometheus';

/**
 * deploy/prometheus/petstore.rules.yml and deploy/grafana/petstore-api.json (docs/runbook.md): promtool's checks and
 * unit tests (each alert made to fire and not to fire by petstore.rules.test.yml), every metric they name one the
 * service exports, every alert's runbook_url a section of the runbook. prometheus-scenario.e2e.spec.ts runs them on
 * a real Prometheus.
 */
const PROMTOOL = onPath('promtool') ?? '';
if (!PROMTOOL) {
  console.warn(
    'prometheus-rules: promtool is not installed (Debian: apt-get install prometheus; .ci/run does), so ' +
      '`promtool check rules` and `promtool test rules` are skipped.',
  );
}

(PROMTOOL ? describe : describe.skip)('promtool', () => {
  it('checks the rules: valid PromQL, valid templates, no duplicate', () => {
    const result = promtool(PROMTOOL, ['check', 'rules', RULES_FILE]);
    expect(result).toEqual({ ok: true, output: expect.stringMatching(/SUCCESS: \d+ rules found/) });
  });

  it('passes the rules unit tests: each alert fires on its series and not on the others', () => {
    const result = promtool(PROMTOOL, ['test', 'rules', RULES_TEST_FILE]);
    expect(result).toEqual({ ok: true, output: expect.stringContaining('SUCCESS') });
  });
});

describe('the rules and the dashboard', () => {
  it('reads metric names out of PromQL (the helper the other tests rely on)', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{route!~"/a|b"}[5m])))',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(metricNames('db_replica_lag_seconds > 30 and on (instance, replica) db_replica_up == 1')).toEqual([
      'db_replica_lag_seconds',
      'db_replica_up',
    ]);
    expect(
      metricNames('(sum(rate(a_total[5m])) or vector(0)) / sum(rate(b_total[1h] offset 1d)) > (14.4 * 1e-3)'),
    ).toEqual(['a_total', 'b_total']);
  });

  it('name only metrics the service exports (a scrape of it, every optional part on) or the rules record', async () => {
    // Every part that registers metrics on: Redis configured (redis_up; nothing answers on that port), a read
    // replica (db_replica_*: the primary itself, which is no standby, so it stays out), the admission limit.
    const api = await TestApp.start({
      auth: { redisUrl: 'redis://127.0.0.1:1' },
      admission: { mode: 'on' },
    });
    let scrape: string;
    try {
      const replicas = await TestApp.startOn(api.databaseUrl, {
        auth: { redisUrl: 'redis://127.0.0.1:1' },
        admission: { mode: 'on' },
        database: { replicaUrls: [api.databaseUrl] },
      });
      try {
        const [one, two] = await Promise.all(
          [api, replicas].map(async (app) => (await app.get('/metrics', { key: ADMIN_KEY })).body as string),
        );
        scrape = one + two;
      } finally {
        await replicas.close();
      }
    } finally {
      await api.close();
    }
    const exported = exportedNames(scrape);
    for (const name of ['http_request_duration_seconds_bucket', 'db_up', 'redis_up', 'db_replica_in_use']) {
      expect(exported).toContain(name);
    }
    const recorded = new Set(recordingRules().map((rule) => rule.record));
    const unknown = (expr: string) => metricNames(expr).filter((name) => !exported.has(name) && !recorded.has(name));

    const rules = [...recordingRules(), ...alertingRules()];
    expect(rules.length).toBeGreaterThan(20);
    for (const rule of rules) {
      const name = 'record' in rule ? rule.record : rule.alert;
      expect({ name, names: metricNames(rule.expr).length, unknown: unknown(rule.expr) }).toEqual({
        name,
        names: expect.any(Number),
        unknown: [],
      });
      expect(metricNames(rule.expr).length).toBeGreaterThan(0);
    }
    const panels = dashboardExpressions();
    expect(panels.length).toBeGreaterThan(20);
    for (const { panel, expr } of panels) {
      expect({ panel, expr, unknown: unknown(expr) }).toEqual({ panel, expr, unknown: [] });
      expect(metricNames(expr).length).toBeGreaterThan(0);
    }
  });

  it("gives each alert a severity, a summary and a runbook_url to the alert's own section of docs/runbook.md", () => {
    const anchors = headingAnchors(readFileSync(RUNBOOK_FILE, 'utf8'));
    const alerts = alertingRules();
    expect(alerts.length).toBeGreaterThan(10);
    for (const { alert, labels, annotations } of alerts) {
      expect({ alert, severity: labels?.['severity'] }).toEqual({
        alert,
        severity: expect.stringMatching(/^(critical|warning|info)$/),
      });
      expect({ alert, summary: annotations?.['summary'] }).toEqual({ alert, summary: expect.any(String) });
      const url = annotations?.['runbook_url'] ?? '';
      expect({ alert, url }).toEqual({ alert, url: `docs/runbook.md#${alert.toLowerCase()}` });
      expect({ alert, anchor: anchors.has(url.split('#')[1]) }).toEqual({ alert, anchor: true });
    }
    // No section for an alert that is gone.
    const names = new Set(alerts.map((rule) => rule.alert.toLowerCase()));
    const sections = [...anchors].filter((anchor) => anchor.startsWith('petstore'));
    expect(sections.filter((anchor) => !names.has(anchor))).toEqual([]);
  });
});
