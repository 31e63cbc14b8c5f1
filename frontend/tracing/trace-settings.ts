/**
 * Whether and where tsserve exports traces, from `--otlp-traces-endpoint` (vLLM's flag) and
 * OpenTelemetry's standard environment (the flag wins). Tracing is on when the flag is given,
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (used as is), or `OTEL_TRACES_EXPORTER=otlp`
 * (then `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`, default `http://127.0.0.1:4318/v1/traces`);
 * otherwise it is off and nothing of the tracing SDK is built. `OTEL_TRACES_SAMPLER` /
 * `OTEL_TRACES_SAMPLER_ARG` (default `parentbased_always_on`), `OTEL_EXPORTER_OTLP_TRACES_HEADERS`
 * or `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` (ms), the batch span
 * processor's `OTEL_BSP_MAX_QUEUE_SIZE` / `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` /
 * `OTEL_BSP_SCHEDULE_DELAY`, `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`. Parsing never
 * throws: it returns the settings (or null: off) or every problem found.
 */
import { DEFAULT_OTLP_BASE, httpUrl, otelResource, parseOtelPairs } from '../metrics/otlp/otlp-settings.js';

/** OpenTelemetry's sampler names (`OTEL_TRACES_SAMPLER`). */
export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** One of OpenTelemetry's sampler names. */
export type SamplerName = (typeof SAMPLERS)[number];

/** The tracer's settings. */
export interface TracingSettings {
  /** The collector's traces URL (`http://host:4318/v1/traces`). */
  readonly endpoint: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly resource: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** The ratio of the `*traceidratio` samplers, in [0, 1] (default 1). */
  readonly ratio: number;
  /** Finished spans held for export at most; past it a span is dropped and counted (default 2048). */
  readonly maxQueueSize: number;
  /** Spans in one export at most (default 512, never above maxQueueSize). */
  readonly maxExportBatchSize: number;
  /** Time between two exports in ms (default 5000). */
  readonly scheduledDelayMs: number;
  /** Bound on one export in ms (default 10000, OpenTelemetry's OTLP exporter default). */
  readonly exportTimeoutMs: number;
}

function wholeNumber(name: string, raw: string | undefined, def: number, max: number, problems: string[]): number {
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0 || n > max) {
    problems.push(`${name}: ${JSON.stringify(raw.slice(0, 40))} is not a whole number in 1..${max}`);
    return def;
  }
  return n;
}

/** The endpoint tracing exports to, and where it came from; null when tracing is off. */
function endpointOf(flag: string | null, env: NodeJS.ProcessEnv): { source: string; value: string } | null {
  if (flag !== null) return { source: '--otlp-traces-endpoint', value: flag };
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
    return { source: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', value: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT };
  if ((env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase() !== 'otlp') return null;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT ? env.OTEL_EXPORTER_OTLP_ENDPOINT : DEFAULT_OTLP_BASE;
  return {
    source: env.OTEL_EXPORTER_OTLP_ENDPOINT ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : 'OTEL_TRACES_EXPORTER',
    value: base.replace(/\/+$/, '') + '/v1/traces',
  };
}

/** The sampler and its ratio from `OTEL_TRACES_SAMPLER` / `_ARG`. */
function samplerOf(env: NodeJS.ProcessEnv, problems: string[]): { sampler: SamplerName; ratio: number } {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on';
  if (!(SAMPLERS as readonly string[]).includes(name)) {
    problems.push(`OTEL_TRACES_SAMPLER: ${JSON.stringify(name.slice(0, 40))} (use ${SAMPLERS.join(', ')})`);
    return { sampler: 'parentbased_always_on', ratio: 1 };
  }
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  let ratio = 1;
  if (arg !== undefined && arg.trim() !== '' && name.endsWith('traceidratio')) {
    ratio = Number(arg);
    if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
      problems.push(`OTEL_TRACES_SAMPLER_ARG: ${JSON.stringify(arg.slice(0, 40))} is not a ratio in [0, 1]`);
      ratio = 1;
    }
  }
  return { sampler: name as SamplerName, ratio };
}

/** The tracer's settings for `flag` (null: not given) and `env`; `settings` null: tracing is off. */
export function otlpTracesSettings(
  flag: string | null,
  env: NodeJS.ProcessEnv,
  serviceName: string,
): { settings: TracingSettings | null } | { problems: string[] } {
  const raw = endpointOf(flag, env);
  if (raw === null) return { settings: null };
  const problems: string[] = [];
  let endpoint = '';
  const u = httpUrl(raw.source, raw.value);
  if ('problem' in u) problems.push(u.problem);
  else endpoint = u.url;
  const { sampler, ratio } = samplerOf(env, problems);
  const headerVar = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS
    ? 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'
    : env.OTEL_EXPORTER_OTLP_HEADERS
      ? 'OTEL_EXPORTER_OTLP_HEADERS'
      : null;
  let headers: Record<string, string> = {};
  if (headerVar !== null) {
    const h = parseOtelPairs(headerVar, env[headerVar] as string);
    if ('problem' in h) problems.push(h.problem);
    else headers = h.pairs;
  }
  const maxQueueSize = wholeNumber('OTEL_BSP_MAX_QUEUE_SIZE', env.OTEL_BSP_MAX_QUEUE_SIZE, 2048, 1_000_000, problems);
  const batch = wholeNumber(
    'OTEL_BSP_MAX_EXPORT_BATCH_SIZE',
    env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
    512,
    1_000_000,
    problems,
  );
  const scheduledDelayMs = wholeNumber(
    'OTEL_BSP_SCHEDULE_DELAY',
    env.OTEL_BSP_SCHEDULE_DELAY,
    5000,
    86_400_000,
    problems,
  );
  const exportTimeoutMs = wholeNumber(
    'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT',
    env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
    10_000,
    86_400_000,
    problems,
  );
  const resource = otelResource(env, serviceName, problems);
  if (problems.length > 0) return { problems };
  return {
    settings: {
      endpoint,
      headers,
      resource,
      sampler,
      ratio,
      maxQueueSize,
      maxExportBatchSize: Math.min(batch, maxQueueSize),
      scheduledDelayMs,
      exportTimeoutMs,
    },
  };
}
