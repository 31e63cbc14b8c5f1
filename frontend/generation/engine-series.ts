/**
 * The vLLM-style metric series of one engine (one generation worker of one model), bound once
 * when the engine starts: recording is then a property access and an add. A family missing
 * from metrics.yaml is switched off (a no-op series); one declared with another type or other
 * dimensions is switched off with one warning naming what the frontend supplies.
 */
import type { FinishReason } from '../../schema/engine-ipc.js';
import type { MetricType } from '../../schema/types.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import type { MetricsPort, SeriesHandle } from '../server/metrics-port.js';

/** The engine's KV-cache settings, exported as the labels of `ts_cache_config_info`. */
export interface CacheConfigInfo {
  readonly blockSize: number;
  readonly numBlocks: number;
  readonly enablePrefixCaching: boolean;
}

/** Every finish reason, each pre-created at 0 so dashboards see the series before traffic. */
export const FINISH_REASONS: readonly FinishReason[] = ['stop', 'length', 'abort', 'error'];

/** Every series the stat processor records into. */
export interface EngineSeries {
  readonly running: SeriesHandle;
  readonly waiting: SeriesHandle;
  readonly kvCacheUsage: SeriesHandle;
  readonly promptTokens: SeriesHandle;
  readonly generationTokens: SeriesHandle;
  readonly preemptions: SeriesHandle;
  readonly prefixCacheQueries: SeriesHandle;
  readonly prefixCacheHits: SeriesHandle;
  readonly success: Readonly<Record<FinishReason, SeriesHandle>>;
  readonly ttft: SeriesHandle;
  readonly itl: SeriesHandle;
  readonly e2e: SeriesHandle;
  readonly queue: SeriesHandle;
  readonly prefill: SeriesHandle;
  readonly decode: SeriesHandle;
  readonly inference: SeriesHandle;
  readonly tpot: SeriesHandle;
  readonly requestPromptTokens: SeriesHandle;
  readonly requestGenerationTokens: SeriesHandle;
  readonly iterationTokens: SeriesHandle;
  readonly paramsN: SeriesHandle;
  readonly paramsMaxTokens: SeriesHandle;
  readonly maxNumGenerationTokens: SeriesHandle;
  // Speculative decoding: bound here, created by the first stats of a speculating engine.
  readonly specDrafts: SeriesHandle;
  readonly specDraftTokens: SeriesHandle;
  readonly specAcceptedTokens: SeriesHandle;
  /** `ts_spec_decode_num_accepted_tokens_per_pos_total` of one draft position (bound once per position). */
  specAcceptedPerPos(position: number): SeriesHandle;
}

const NOOP: SeriesHandle = { record: () => undefined };
const BASE = ['model_name', 'engine'];

/** Metric name → (type, extra dimensions beyond model_name and engine). */
export const ENGINE_METRICS: Readonly<Record<string, { readonly type: MetricType; readonly extra: readonly string[] }>> = {
  ts_num_requests_running: { type: 'gauge', extra: [] },
  ts_num_requests_waiting: { type: 'gauge', extra: [] },
  ts_kv_cache_usage_ratio: { type: 'gauge', extra: [] },
  ts_cache_config_info: { type: 'gauge', extra: ['block_size', 'num_blocks', 'enable_prefix_caching'] },
  ts_prompt_tokens_total: { type: 'counter', extra: [] },
  ts_generation_tokens_total: { type: 'counter', extra: [] },
  ts_request_success_total: { type: 'counter', extra: ['finished_reason'] },
  ts_num_preemptions_total: { type: 'counter', extra: [] },
  ts_prefix_cache_queries_total: { type: 'counter', extra: [] },
  ts_prefix_cache_hits_total: { type: 'counter', extra: [] },
  ts_time_to_first_token_seconds: { type: 'histogram', extra: [] },
  ts_inter_token_latency_seconds: { type: 'histogram', extra: [] },
  ts_e2e_request_latency_seconds: { type: 'histogram', extra: [] },
  ts_request_queue_time_seconds: { type: 'histogram', extra: [] },
  ts_request_prefill_time_seconds: { type: 'histogram', extra: [] },
  ts_request_decode_time_seconds: { type: 'histogram', extra: [] },
  ts_request_inference_time_seconds: { type: 'histogram', extra: [] },
  ts_request_time_per_output_token_seconds: { type: 'histogram', extra: [] },
  ts_request_prompt_tokens: { type: 'histogram', extra: [] },
  ts_request_generation_tokens: { type: 'histogram', extra: [] },
  ts_iteration_tokens: { type: 'histogram', extra: [] },
  ts_request_params_n: { type: 'histogram', extra: [] },
  ts_request_params_max_tokens: { type: 'histogram', extra: [] },
  ts_request_max_num_generation_tokens: { type: 'histogram', extra: [] },
  ts_spec_decode_num_drafts_total: { type: 'counter', extra: [] },
  ts_spec_decode_num_draft_tokens_total: { type: 'counter', extra: [] },
  ts_spec_decode_num_accepted_tokens_total: { type: 'counter', extra: [] },
  ts_spec_decode_num_accepted_tokens_per_pos_total: { type: 'counter', extra: ['position'] },
};

/** Problems with how metrics.yaml declares the engine families, by metric name (empty when fine). */
export function checkEngineMetrics(metrics: Pick<MetricsPort, 'get'>): ReadonlyMap<string, string> {
  const problems = new Map<string, string>();
  for (const [name, e] of Object.entries(ENGINE_METRICS)) {
    const m = metrics.get(name);
    if (m === null) continue;
    const want = [...BASE, ...e.extra];
    if (m.spec.type !== e.type) {
      problems.set(name, `metric ${name} must be a ${e.type} (declared ${m.spec.type}); it is switched off`);
    } else if ([...m.spec.dimensions].sort().join(',') !== [...want].sort().join(',')) {
      problems.set(name, `metric ${name} must have dimensions [${want.join(', ')}] (+ the hostname), declared [${m.spec.dimensions.join(', ')}]; it is switched off`);
    }
  }
  return problems;
}

/**
 * Binds every engine family for (model, engine); counters are recorded at 0 and gauges set to
 * 0 (cache info to 1) so every series exists from start-up, as vLLM pre-creates its children.
 */
export function bindEngineSeries(
  metrics: Pick<MetricsPort, 'get'>,
  modelName: string,
  engine: string,
  cache: CacheConfigInfo,
  /** A pipeline stage's replica: `{hostname, stage, replica}`, which stand in for `engine` (schema/auto-labels.ts). */
  autoLabels?: AutoLabels,
  /** False with --disable-log-stats: every series is a no-op, none is created. */
  enabled = true,
): EngineSeries {
  const bad = checkEngineMetrics(metrics);
  const bind = (name: string, extra: Readonly<Record<string, string>> = {}): SeriesHandle => {
    const m = !enabled || bad.has(name) ? null : metrics.get(name);
    return m === null ? NOOP : m.bind({ model_name: modelName, engine, ...extra }, autoLabels);
  };
  const counter = (name: string, extra?: Readonly<Record<string, string>>): SeriesHandle => {
    const s = bind(name, extra);
    s.record(0);
    return s;
  };
  const gauge = (name: string): SeriesHandle => {
    const s = bind(name);
    s.record(0);
    return s;
  };
  bind('ts_cache_config_info', {
    block_size: String(cache.blockSize),
    num_blocks: String(cache.numBlocks),
    enable_prefix_caching: String(cache.enablePrefixCaching),
  }).record(1);
  const success = {} as Record<FinishReason, SeriesHandle>;
  for (const r of FINISH_REASONS) success[r] = counter('ts_request_success_total', { finished_reason: r });
  const perPos: SeriesHandle[] = [];
  return {
    running: gauge('ts_num_requests_running'),
    waiting: gauge('ts_num_requests_waiting'),
    kvCacheUsage: gauge('ts_kv_cache_usage_ratio'),
    promptTokens: counter('ts_prompt_tokens_total'),
    generationTokens: counter('ts_generation_tokens_total'),
    preemptions: counter('ts_num_preemptions_total'),
    prefixCacheQueries: counter('ts_prefix_cache_queries_total'),
    prefixCacheHits: counter('ts_prefix_cache_hits_total'),
    success,
    ttft: bind('ts_time_to_first_token_seconds'),
    itl: bind('ts_inter_token_latency_seconds'),
    e2e: bind('ts_e2e_request_latency_seconds'),
    queue: bind('ts_request_queue_time_seconds'),
    prefill: bind('ts_request_prefill_time_seconds'),
    decode: bind('ts_request_decode_time_seconds'),
    inference: bind('ts_request_inference_time_seconds'),
    tpot: bind('ts_request_time_per_output_token_seconds'),
    requestPromptTokens: bind('ts_request_prompt_tokens'),
    requestGenerationTokens: bind('ts_request_generation_tokens'),
    iterationTokens: bind('ts_iteration_tokens'),
    paramsN: bind('ts_request_params_n'),
    paramsMaxTokens: bind('ts_request_params_max_tokens'),
    maxNumGenerationTokens: bind('ts_request_max_num_generation_tokens'),
    specDrafts: bind('ts_spec_decode_num_drafts_total'),
    specDraftTokens: bind('ts_spec_decode_num_draft_tokens_total'),
    specAcceptedTokens: bind('ts_spec_decode_num_accepted_tokens_total'),
    specAcceptedPerPos: (position) => (perPos[position] ??= bind('ts_spec_decode_num_accepted_tokens_per_pos_total', { position: String(position) })),
  };
}
