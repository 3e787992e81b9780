/**
 * Imported first by main.ts: OpenTelemetry, when OTEL_EXPORTER_OTLP_ENDPOINT is set, must patch
 * `http` and `pg` before anything requires them. An invalid configuration is left for main() to
 * report.
 */
import { startTracing } from './tracing';
import { loadConfig } from '../../config/app-config';

try {
  startTracing(loadConfig(process.env).observability.otlpEndpoint);
} catch {
  // main() loads the configuration again and reports the problem in one line.
}
