/**
 * Running a generated Grafana dashboard's queries on a real Prometheus, as Grafana would: each
 * query variable filled with the values its own `label_values` query finds, `$__rate_interval`
 * with 1m. Shared by the dashboards test (one instance) and the instances test (three behind
 * HAProxy, one of them stopped).
 */
import { expect } from 'chai';
import { loadMetricsConfig, defaultMetricsConfigPath } from '../../schema/config/load.js';
import { dashboardQueries } from '../../tools/dashboards/grafana.js';
import { renderDashboards } from '../../tools/dashboards/render.js';
import type { Prometheus } from './prometheus.js';

/** Families no traffic of the tests reaches, by design: their queries must parse, and may return nothing. */
export const MAY_BE_EMPTY: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bGPU\w+/, 'no GPU on the test machine'],
  [/\bRequests5XX_total\b/, 'no request fails with a 5xx (a /ping before the models load may or may not count one)'],
  [
    /\btsserve_datapoints_dropped_total\b/,
    "no datapoint is dropped (a reason's series is rendered from its first drop)",
  ],
  [/\btsserve_sink_errors_total\b/, "bound on a sink's first error; the sinks are healthy"],
  [/\btsserve_series_overflow_total\b/, "bound on a metric's first overflow; no metric reaches its limit"],
  [
    /\bts_omni_audio_skipped_requests_total\b/,
    'no spoken request is skipped (the vocoder takes every codec token the thinker emits)',
  ],
  [/\b\w*spec_decode_\w*/, 'speculative decoding is off in the demo tiny-lm'],
  [/\b\w*kv_block_\w*/, 'KV residency sampling is off by default'],
  [/\btsserve_worker_output_faults_total\b/, "bound on a worker's first fault; the test workers answer well"],
  [
    /\btsserve_log_errors_total\b/,
    "bound on a log file's first failure; the test servers' log directories are writable",
  ],
  [
    /\btsserve_front_restarts_total\b/,
    'front processes exist only with --api-server-count 2 or more; these servers run one',
  ],
  [/\btsserve_cache_evictions_total\b/, 'bound on the first eviction of the trace id table, past 4096 traced requests'],
  [/\btsserve_spans_dropped_total\b/, 'bound on the first trace span lost; the test servers run without tracing'],
  [
    /\bts_corrupted_requests_total\b/,
    "registered only with VLLM_COMPUTE_NANS_IN_LOGITS=1 (vLLM's switch); the test servers run without it",
  ],
];

/** A generated dashboard: its file name and parsed JSON. */
export interface Dashboard {
  readonly file: string;
  readonly json: {
    readonly templating: {
      readonly list: ReadonlyArray<{
        readonly name: string;
        readonly type: string;
        readonly query?: { readonly query?: string };
      }>;
    };
  };
}

/** The dashboards generated from the repo's metrics.yaml. */
export function repoDashboards(): Dashboard[] {
  const r = loadMetricsConfig(defaultMetricsConfigPath());
  if (!r.ok) throw new Error('the repo metrics.yaml does not load');
  return renderDashboards(r.config).map((f) => ({ file: f.file, json: JSON.parse(f.text) as Dashboard['json'] }));
}

/** A label value as a regex inside a PromQL string, as Grafana writes a multi-value variable: regex-escaped, then string-escaped. */
function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('\\', '\\\\');
}

/** The real values of each query variable of a dashboard, from its own label_values query (each must find some). */
export async function variableValues(prom: Prometheus, d: Dashboard): Promise<Map<string, string[]>> {
  const values = new Map<string, string[]>();
  for (const v of d.json.templating.list.filter((t) => t.type === 'query')) {
    const q = v.query?.query ?? '';
    const m = /^label_values\((.+), (\w+)\)$/.exec(q);
    expect(m, `${d.file} variable ${v.name}: ${q}`).to.not.equal(null);
    const res = await fetch(`${prom.url}/api/v1/label/${m![2]}/values?match[]=${encodeURIComponent(m![1] as string)}`);
    const body = (await res.json()) as { status: string; data: string[] };
    expect([body.status, body.data.length > 0], `${d.file} variable ${v.name}: ${q}`).to.deep.equal(['success', true]);
    values.set(v.name, body.data);
  }
  return values;
}

/** `expr` with the variables filled in. */
export function substitute(expr: string, values: ReadonlyMap<string, readonly string[]>): string {
  let out = expr.replaceAll('$__rate_interval', '1m');
  for (const [name, vals] of values)
    out = out.replace(new RegExp(`\\$${name}\\b`, 'g'), `(${vals.map(escapeRegex).join('|')})`);
  return out;
}

/**
 * Runs every query of `d` (each must parse: a parse error rejects); returns how many returned
 * data and the panels whose query returned none without a reason in `mayBeEmpty`.
 */
export async function runDashboard(
  prom: Prometheus,
  d: Dashboard,
  mayBeEmpty: ReadonlyArray<readonly [RegExp, string]>,
): Promise<{ answered: number; empty: string[] }> {
  const values = await variableValues(prom, d);
  const empty: string[] = [];
  let answered = 0;
  for (const q of dashboardQueries(d.json)) {
    const expr = substitute(q.expr, values);
    expect(expr, `${q.panel}: a variable left unsubstituted`).to.not.match(/\$\w/);
    if ((await prom.query(expr)).length > 0) answered++;
    else if (mayBeEmpty.find(([re]) => re.test(q.expr)) === undefined) empty.push(`${q.panel}: ${expr}`);
  }
  return { answered, empty };
}
