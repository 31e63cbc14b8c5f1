/**
 * `tsserve-generation`: vLLM's families as vLLM's own dashboards show them (latency quantiles
 * and heatmaps, token throughput, scheduler state, KV cache, prefix cache, preemptions, finish
 * reasons), plus generic panels for every engine family no curated panel takes (new families
 * such as speculative decoding appear after a regenerate). Keys list vLLM's spellings too.
 */
import type { MetricSpec } from '../../schema/types.js';
import { DashboardBuilder } from './builder.js';
import type { Families } from './families.js';
import { modelLabel } from './families.js';
import type { DashboardSpec, PanelSpec } from './grafana.js';
import { describe, gaugePanel, genericPanels, histogramPanels } from './panels.js';
import type { VarName } from './promql.js';
import { legend, rate, selector, sumBy } from './promql.js';

const VARS: readonly VarName[] = ['instance', 'model_name', 'engine'];

/** Latency histograms, vLLM's order: key (and aliases), panel title. */
const LATENCY: ReadonlyArray<readonly [readonly string[], string]> = [
  [['time_to_first_token_seconds'], 'Time to first token'],
  [['inter_token_latency_seconds', 'time_per_output_token_seconds'], 'Inter-token latency'],
  [['e2e_request_latency_seconds'], 'End-to-end request latency'],
  [['request_queue_time_seconds'], 'Queue time'],
  [['request_prefill_time_seconds'], 'Prefill time'],
  [['request_decode_time_seconds'], 'Decode time'],
  [['request_inference_time_seconds'], 'Inference time (prefill + decode)'],
  [['request_time_per_output_token_seconds'], 'Time per output token (per request)'],
];

/** Request-shape histograms: key, panel title. */
const SHAPE: ReadonlyArray<readonly [string, string]> = [
  ['request_prompt_tokens', 'Prompt length'],
  ['request_generation_tokens', 'Generation length'],
  ['iteration_tokens', 'Tokens per engine step'],
  ['request_params_max_tokens', 'max_tokens parameter'],
  ['request_params_n', 'n parameter'],
  ['request_max_num_generation_tokens', 'Longest sequence of a request'],
];

function byModel(spec: MetricSpec): string[] {
  const m = modelLabel(spec);
  return m === null ? ['instance'] : [m];
}

function totalStat(spec: MetricSpec | null, title: string): PanelSpec | null {
  if (spec === null) return null;
  const by = byModel(spec);
  return {
    type: 'stat',
    title,
    description: describe(spec, 'Counter value since each instance started.'),
    queries: [{ expr: sumBy(by, selector(spec, VARS)), legend: legend(by), instant: true }],
  };
}

function throughput(b: DashboardBuilder, success: MetricSpec | null): PanelSpec[] {
  const out: PanelSpec[] = [];
  const tokens = (
    [
      ['prompt_tokens_total', 'prompt_tokens'],
      ['generation_tokens_total', 'generation_tokens'],
    ] as const
  )
    .map((keys) => b.use(...keys))
    .filter((s): s is MetricSpec => s !== null);
  if (tokens.length > 0) {
    out.push({
      type: 'timeseries',
      title: 'Token throughput (tokens per second)',
      description: tokens.map((s) => describe(s)).join(' '),
      unit: 'short',
      queries: tokens.map((s) => ({ expr: rate(s, VARS, byModel(s)), legend: `${legend(byModel(s))} ${s.name}` })),
    });
  }
  if (success !== null) {
    const by = ['finished_reason'].filter((d) => success.dimensions.includes(d));
    out.push({
      type: 'timeseries',
      title: 'Finished requests by finish reason (per second)',
      description: describe(success),
      unit: 'reqps',
      queries: [{ expr: rate(success, VARS, by), legend: legend(by) }],
    });
  }
  return out;
}

function scheduler(b: DashboardBuilder): PanelSpec[] {
  const out: PanelSpec[] = [];
  const state = ([['num_requests_running'], ['num_requests_waiting']] as const)
    .map((keys) => b.use(...keys))
    .filter((s): s is MetricSpec => s !== null);
  if (state.length > 0) {
    out.push({
      type: 'timeseries',
      title: 'Scheduler state: running and waiting requests',
      description: state.map((s) => describe(s)).join(' '),
      unit: 'short',
      queries: state.map((s) => ({
        expr: sumBy(byModel(s), selector(s, VARS)),
        legend: `${legend(byModel(s))} ${s.name}`,
      })),
    });
  }
  const kv = b.use('kv_cache_usage_ratio', 'kv_cache_usage_perc', 'gpu_cache_usage_perc');
  if (kv !== null) out.push(gaugePanel(kv, VARS, 'KV cache usage'));
  const hits = b.use('prefix_cache_hits_total', 'prefix_cache_hits');
  const queries = b.use('prefix_cache_queries_total', 'prefix_cache_queries');
  if (hits !== null && queries !== null) {
    const by = byModel(hits);
    out.push({
      type: 'timeseries',
      title: 'Prefix cache hit rate',
      description: `Share of looked-up prompt tokens found in the prefix cache over the interval: ${describe(hits)} over ${describe(queries)}`,
      unit: 'percentunit',
      queries: [{ expr: `${rate(hits, VARS, by)} / ${rate(queries, VARS, by)}`, legend: legend(by) }],
    });
  }
  const preemptions = b.use('num_preemptions_total', 'num_preemptions');
  if (preemptions !== null)
    out.push({
      type: 'timeseries',
      title: 'Preemptions (per second)',
      description: describe(preemptions),
      unit: 'short',
      queries: [{ expr: rate(preemptions, VARS, byModel(preemptions)), legend: legend(byModel(preemptions)) }],
    });
  const info = b.use('cache_config_info');
  if (info !== null) {
    const labels = info.dimensions.filter((d) => d !== modelLabel(info));
    out.push({
      type: 'stat',
      title: 'KV cache configuration',
      description: describe(info),
      width: 12,
      queries: [{ expr: selector(info, VARS), legend: labels.map((l) => `${l}={{${l}}}`).join(' '), instant: true }],
    });
  }
  return out;
}

/** The generation dashboard of a config's families. */
export function generationDashboard(families: Families): DashboardSpec {
  const b = new DashboardBuilder(families, VARS);
  const success = b.use('request_success_total', 'request_success');
  b.section('Overview', [
    totalStat(success, 'Finished requests (since start)'),
    totalStat(b.use('prompt_tokens_total', 'prompt_tokens'), 'Prompt tokens (since start)'),
    totalStat(b.use('generation_tokens_total', 'generation_tokens'), 'Generated tokens (since start)'),
  ]);
  b.section(
    'Latency',
    LATENCY.flatMap(([keys, title]) => {
      const s = b.use(...keys);
      return s === null ? [] : histogramPanels(s, VARS, title);
    }),
  );
  b.section('Throughput', throughput(b, success));
  b.section('Scheduler and KV cache', scheduler(b));
  b.section(
    'Request shape',
    SHAPE.flatMap(([key, title]) => {
      const s = b.use(key);
      return s === null ? [] : histogramPanels(s, VARS, title);
    }),
  );
  const other = families.unclaimed('generation');
  b.uses(other);
  b.section(
    'Other engine metrics',
    other.flatMap((s) => genericPanels(s, VARS)),
  );
  return b.build(
    'tsserve-generation',
    'tsserve / generation',
    "vLLM's metric families as tsserve's engines fill them: latency, throughput, scheduler state, KV and prefix cache. Generated from metrics.yaml by `tsserve metrics dashboard`.",
  );
}
