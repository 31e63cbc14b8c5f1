/**
 * Where and how the otlp sink exports, from its flags and OpenTelemetry's standard environment
 * (the flag wins): `--otlp-metrics-endpoint` / `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` (used as is)
 * or `OTEL_EXPORTER_OTLP_ENDPOINT` (+ `/v1/metrics`), default `http://127.0.0.1:4318/v1/metrics`;
 * `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` (`cumulative`, the default, or `delta`);
 * `OTEL_METRIC_EXPORT_INTERVAL` / `OTEL_METRIC_EXPORT_TIMEOUT` (ms); `OTEL_EXPORTER_OTLP_METRICS_HEADERS`
 * or `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`); `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.
 * Parsing never throws: it returns the settings or every problem found.
 */
import type { OtlpTemporality } from './otlp-cells.js';

/** The otlp sink's settings. */
export interface OtlpSettings {
  readonly endpoint: string;
  readonly temporality: OtlpTemporality;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly resource: Readonly<Record<string, string>>;
}

/** OTLP/HTTP's default port on this host, as every OpenTelemetry SDK defaults to it (but on loopback). */
export const DEFAULT_OTLP_BASE = 'http://127.0.0.1:4318';

/** Most headers or resource attributes taken from one variable (more are a problem, not silently dropped). */
const MAX_PAIRS = 64;

/** `k=v,k2=v2` (OpenTelemetry's list format, values percent-decoded) or a problem. */
export function parseOtelPairs(name: string, value: string): { pairs: Record<string, string> } | { problem: string } {
  const pairs: Record<string, string> = {};
  const items = value.split(',').filter((s) => s.trim() !== '');
  if (items.length > MAX_PAIRS) return { problem: `${name}: ${items.length} entries, at most ${MAX_PAIRS}` };
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) return { problem: `${name}: ${JSON.stringify(item.slice(0, 40))} is not key=value` };
    try {
      pairs[decodeURIComponent(item.slice(0, eq).trim())] = decodeURIComponent(item.slice(eq + 1).trim());
    } catch {
      return { problem: `${name}: ${JSON.stringify(item.slice(0, 40))} has a bad percent-escape` };
    }
  }
  return { pairs };
}

/** An http(s) URL, or a problem naming `source`. */
export function httpUrl(source: string, value: string): { url: string } | { problem: string } {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return { problem: `${source}: ${JSON.stringify(value.slice(0, 80))} is not a URL` };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { problem: `${source}: ${JSON.stringify(value.slice(0, 80))} is not an http(s) URL` };
  return { url: u.toString() };
}

function positiveMs(name: string, raw: string | undefined, def: number, problems: string[]): number {
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0 || n > 86_400_000) {
    problems.push(`${name}: ${JSON.stringify(raw.slice(0, 40))} is not a whole number of ms in 1..86400000`);
    return def;
  }
  return n;
}

/** The otlp sink's settings for `flagEndpoint` (null: none given) and `env`. */
export function otlpMetricsSettings(
  flagEndpoint: string | null,
  env: NodeJS.ProcessEnv,
  serviceName: string,
): { settings: OtlpSettings } | { problems: string[] } {
  const problems: string[] = [];
  let endpoint = `${DEFAULT_OTLP_BASE}/v1/metrics`;
  const raw =
    flagEndpoint !== null
      ? { source: '--otlp-metrics-endpoint', value: flagEndpoint }
      : env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
        ? { source: 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', value: env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT }
        : env.OTEL_EXPORTER_OTLP_ENDPOINT
          ? {
              source: 'OTEL_EXPORTER_OTLP_ENDPOINT',
              value: env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '') + '/v1/metrics',
            }
          : null;
  if (raw !== null) {
    const u = httpUrl(raw.source, raw.value);
    if ('problem' in u) problems.push(u.problem);
    else endpoint = u.url;
  }
  const pref = (env.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE ?? 'cumulative').trim().toLowerCase();
  if (pref !== 'cumulative' && pref !== 'delta')
    problems.push(
      `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: ${JSON.stringify(pref.slice(0, 40))} (use cumulative or delta)`,
    );
  const intervalMs = positiveMs('OTEL_METRIC_EXPORT_INTERVAL', env.OTEL_METRIC_EXPORT_INTERVAL, 60_000, problems);
  const timeoutMs = positiveMs('OTEL_METRIC_EXPORT_TIMEOUT', env.OTEL_METRIC_EXPORT_TIMEOUT, 30_000, problems);
  const headerVar = env.OTEL_EXPORTER_OTLP_METRICS_HEADERS
    ? 'OTEL_EXPORTER_OTLP_METRICS_HEADERS'
    : env.OTEL_EXPORTER_OTLP_HEADERS
      ? 'OTEL_EXPORTER_OTLP_HEADERS'
      : null;
  let headers: Record<string, string> = {};
  if (headerVar !== null) {
    const h = parseOtelPairs(headerVar, env[headerVar] as string);
    if ('problem' in h) problems.push(h.problem);
    else headers = h.pairs;
  }
  const resource = otelResource(env, serviceName, problems);
  if (problems.length > 0) return { problems };
  return { settings: { endpoint, temporality: pref as OtlpTemporality, intervalMs, timeoutMs, headers, resource } };
}

/** `OTEL_RESOURCE_ATTRIBUTES` with `service.name` from `OTEL_SERVICE_NAME` (else the given one). */
export function otelResource(env: NodeJS.ProcessEnv, serviceName: string, problems: string[]): Record<string, string> {
  let attrs: Record<string, string> = {};
  if (env.OTEL_RESOURCE_ATTRIBUTES) {
    const r = parseOtelPairs('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES);
    if ('problem' in r) problems.push(r.problem);
    else attrs = r.pairs;
  }
  const name = env.OTEL_SERVICE_NAME?.trim() || attrs['service.name'] || serviceName;
  return { ...attrs, 'service.name': name };
}
