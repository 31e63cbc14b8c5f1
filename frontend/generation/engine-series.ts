/**
 * The vLLM-style metric series of one engine (one generation worker of one model), bound once
 * when the engine starts: recording is then a property access and an add. Families are found by
 * their metrics.yaml `key:` (names, help and buckets are the yaml's: the default file says
 * `ts_time_to_first_token_seconds`, metrics-vllm.yaml `vllm:time_to_first_token_seconds`). A key
 * no entry carries is switched off (a no-op series); one declared with another type or other
 * dimensions is switched off with one warning naming what the frontend supplies.
 */
import type { FinishReason } from '../../schema/engine-ipc.js';
import type { AutoLabels, BoundSeries } from '../../schema/metrics-api.js';
import { ENGINE_BINDINGS } from '../../schema/metric-catalog.js';
import type { EngineKey, KeyBinding } from '../../schema/metric-catalog.js';
import { NOOP_SERIES } from '../../schema/metrics-api.js';
import { cacheConfigLabels } from './cache-config.js';
import type { MetricHandle, MetricsPort } from '../models/metrics-port.js';
import type { CacheConfigInfo } from './cache-config.js';

export type { CacheConfigInfo } from './cache-config.js';

/** Every finish reason, each pre-created at 0 so dashboards see the series before traffic. */
export const FINISH_REASONS: readonly FinishReason[] = ['stop', 'length', 'abort', 'error'];

/**
 * vLLM's fifth reason, pre-created at 0 as vLLM pre-creates all five: vLLM records it for its
 * repetition-detection stop, which this engine does not have, so it stays a true 0.
 */
export const REPETITION_REASON = 'repetition';

/** Where a prompt token's K/V came from (vLLM's `source` label; no KV connector here, so no external_kv_transfer). */
export type PromptSource = 'local_compute' | 'local_cache_hit';

/** Every prompt-token source, each pre-created at 0. */
export const PROMPT_SOURCES: readonly PromptSource[] = ['local_compute', 'local_cache_hit'];

/** Why a request waits (vLLM's `reason` label); nothing here defers a request, so `deferred` stays 0. */
export type WaitingReason = 'capacity' | 'deferred';

/** vLLM's `sleep_state` label values: awake, or asleep at level 1 (weights kept aside) or 2 (all discarded). */
export type SleepState = 'awake' | 'weights_offloaded' | 'discard_all';

/** Every sleep state, each pre-created (awake at 1, the others at 0). */
export const SLEEP_STATES: readonly SleepState[] = ['awake', 'weights_offloaded', 'discard_all'];

/** Every waiting reason, each pre-created at 0. */
export const WAITING_REASONS: readonly WaitingReason[] = ['capacity', 'deferred'];

/** Every series the stat processor records into. */
export interface EngineSeries {
  readonly running: BoundSeries;
  readonly waiting: BoundSeries;
  readonly waitingByReason: Readonly<Record<WaitingReason, BoundSeries>>;
  readonly sleepState: Readonly<Record<SleepState, BoundSeries>>;
  readonly kvCacheUsage: BoundSeries;
  /** The deprecated alias of kvCacheUsage (vLLM's `gpu_cache_usage_perc`); off unless declared. */
  readonly gpuCacheUsage: BoundSeries;
  readonly promptTokens: BoundSeries;
  readonly promptTokensBySource: Readonly<Record<PromptSource, BoundSeries>>;
  readonly promptTokensCached: BoundSeries;
  readonly promptTokensRecomputed: BoundSeries;
  readonly generationTokens: BoundSeries;
  readonly preemptions: BoundSeries;
  /** Finished sequences whose logits held a NaN; a no-op unless the server scans (VLLM_COMPUTE_NANS_IN_LOGITS=1). */
  readonly corruptedRequests: BoundSeries;
  /** The MFU estimate's counters (registered at 0 always; recorded only with --enable-mfu-metrics). */
  readonly estimatedFlops: BoundSeries;
  readonly estimatedReadBytes: BoundSeries;
  readonly estimatedWriteBytes: BoundSeries;
  /** Detokenizer windows that hit their bound (schema/text/incremental-detokenizer.ts). */
  readonly detokenizerFlushes: BoundSeries;
  readonly prefixCacheQueries: BoundSeries;
  readonly prefixCacheHits: BoundSeries;
  readonly success: Readonly<Record<FinishReason, BoundSeries>>;
  readonly ttft: BoundSeries;
  readonly itl: BoundSeries;
  /** The deprecated alias of itl (vLLM's `time_per_output_token_seconds`); off unless declared. */
  readonly tpotAlias: BoundSeries;
  readonly e2e: BoundSeries;
  readonly queue: BoundSeries;
  readonly prefill: BoundSeries;
  readonly decode: BoundSeries;
  readonly inference: BoundSeries;
  readonly tpot: BoundSeries;
  readonly requestPromptTokens: BoundSeries;
  readonly requestGenerationTokens: BoundSeries;
  readonly requestPrefillKvComputedTokens: BoundSeries;
  readonly iterationTokens: BoundSeries;
  readonly paramsN: BoundSeries;
  readonly paramsMaxTokens: BoundSeries;
  readonly maxNumGenerationTokens: BoundSeries;
  readonly kvBlockLifetime: BoundSeries;
  /** `tsserve_datapoints_dropped_total{reason="queue_full"}`: sampled evictions the engine's bounded queue dropped. */
  readonly kvEvictionsDropped: BoundSeries;
  readonly kvBlockIdleBeforeEvict: BoundSeries;
  readonly kvBlockReuseGap: BoundSeries;
  // Speculative decoding: bound here, created by the first stats of a speculating engine.
  readonly specDrafts: BoundSeries;
  readonly specDraftTokens: BoundSeries;
  readonly specAcceptedTokens: BoundSeries;
  /** The accepted-tokens-per-position family's series of one draft position (bound once per position). */
  specAcceptedPerPos(position: number): BoundSeries;
}

const BASE = ['model_name', 'engine'];

/** metrics.yaml key → how the frontend fills it (the catalog's table, read by key at start-up). */
export const ENGINE_METRICS: Readonly<Record<string, KeyBinding>> = ENGINE_BINDINGS;

/** Problems with how metrics.yaml declares the engine families, by key (empty when fine). */
export function checkEngineMetrics(metrics: Pick<MetricsPort, 'byKey'>): ReadonlyMap<string, string> {
  const problems = new Map<string, string>();
  for (const [key, e] of Object.entries(ENGINE_METRICS)) {
    const m = metrics.byKey(key);
    if (m === null) continue;
    const name = `metric ${m.spec.name} (key ${key})`;
    const want = [...BASE, ...e.extra];
    const declared = m.spec.dimensions;
    if (m.spec.type !== e.type) {
      problems.set(key, `${name} must be a ${e.type} (declared ${m.spec.type}); it is switched off`);
    } else if (e.info === true) {
      const unknown = declared.filter((d) => !want.includes(d));
      if (unknown.length > 0)
        problems.set(
          key,
          `${name} may only have dimensions among [${want.join(', ')}] (+ the hostname), declared [${declared.join(', ')}]; it is switched off`,
        );
    } else if ([...declared].sort().join(',') !== [...want].sort().join(',')) {
      problems.set(
        key,
        `${name} must have dimensions [${want.join(', ')}] (+ the hostname), declared [${declared.join(', ')}]; it is switched off`,
      );
    }
  }
  return problems;
}

/** The declared dimensions' values out of what the frontend supplies. */
function pick(m: MetricHandle, all: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of m.spec.dimensions) out[d] = all[d] ?? '';
  return out;
}

/**
 * Binds every engine family for (model, engine); counters are recorded at 0 and gauges set to
 * 0 (cache info to 1) so every series exists from start-up, as vLLM pre-creates its children.
 */
export function bindEngineSeries(
  metrics: Pick<MetricsPort, 'byKey'> & Partial<Pick<MetricsPort, 'get'>>,
  modelName: string,
  engine: string,
  cache: CacheConfigInfo,
  /** A pipeline stage's replica: `{hostname, stage, replica}`, which stand in for `engine` (schema/auto-labels.ts). */
  autoLabels?: AutoLabels,
  /** False with --disable-log-stats: every series is a no-op, none is created. */
  enabled = true,
  /** True when the engine scans its logits for NaN (VLLM_COMPUTE_NANS_IN_LOGITS=1): only then is corrupted_requests registered. */
  computeNans = false,
): EngineSeries {
  const bad = checkEngineMetrics(metrics);
  const bind = (key: EngineKey, extra: Readonly<Record<string, string>> = {}): BoundSeries => {
    const m = !enabled || bad.has(key) ? null : metrics.byKey(key);
    return m === null ? NOOP_SERIES : m.bind(pick(m, { model_name: modelName, engine, ...extra }), autoLabels);
  };
  const counter = (key: EngineKey, extra?: Readonly<Record<string, string>>): BoundSeries => {
    const s = bind(key, extra);
    s.record(0);
    return s;
  };
  const gauge = (key: EngineKey, extra?: Readonly<Record<string, string>>): BoundSeries => {
    const s = bind(key, extra);
    s.record(0);
    return s;
  };
  bind('llm.cache_config_info', cacheConfigLabels(cache)).record(1);
  const success = {} as Record<FinishReason, BoundSeries>;
  for (const r of FINISH_REASONS) success[r] = counter('llm.request_success', { finished_reason: r });
  counter('llm.request_success', { finished_reason: REPETITION_REASON });
  const bySource = {} as Record<PromptSource, BoundSeries>;
  for (const s of PROMPT_SOURCES) bySource[s] = counter('llm.prompt_tokens_by_source', { source: s });
  const byReason = {} as Record<WaitingReason, BoundSeries>;
  for (const r of WAITING_REASONS) byReason[r] = gauge('llm.num_requests_waiting_by_reason', { reason: r });
  const sleepState = {} as Record<SleepState, BoundSeries>;
  for (const st of SLEEP_STATES) sleepState[st] = gauge('llm.engine_sleep_state', { sleep_state: st });
  sleepState.awake.record(1);
  const perPos: BoundSeries[] = [];
  // The self-metric (no key: the server's own), for evictions the engine's bounded queue dropped.
  const dropped = enabled ? (metrics.get?.('tsserve_datapoints_dropped_total') ?? null) : null;
  return {
    kvEvictionsDropped: dropped === null ? NOOP_SERIES : dropped.bind(pick(dropped, { reason: 'queue_full' })),
    running: gauge('llm.num_requests_running'),
    waiting: gauge('llm.num_requests_waiting'),
    waitingByReason: byReason,
    sleepState,
    kvCacheUsage: gauge('llm.kv_cache_usage'),
    gpuCacheUsage: gauge('llm.gpu_cache_usage'),
    promptTokens: counter('llm.prompt_tokens'),
    promptTokensBySource: bySource,
    promptTokensCached: counter('llm.prompt_tokens_cached'),
    promptTokensRecomputed: counter('llm.prompt_tokens_recomputed'),
    generationTokens: counter('llm.generation_tokens'),
    preemptions: counter('llm.num_preemptions'),
    corruptedRequests: computeNans ? counter('llm.corrupted_requests') : NOOP_SERIES,
    estimatedFlops: counter('llm.estimated_flops_per_gpu'),
    estimatedReadBytes: counter('llm.estimated_read_bytes_per_gpu'),
    estimatedWriteBytes: counter('llm.estimated_write_bytes_per_gpu'),
    detokenizerFlushes: counter('llm.detokenizer_flushes'),
    prefixCacheQueries: counter('llm.prefix_cache_queries'),
    prefixCacheHits: counter('llm.prefix_cache_hits'),
    success,
    ttft: bind('llm.time_to_first_token'),
    itl: bind('llm.inter_token_latency'),
    tpotAlias: bind('llm.time_per_output_token'),
    e2e: bind('llm.e2e_request_latency'),
    queue: bind('llm.request_queue_time'),
    prefill: bind('llm.request_prefill_time'),
    decode: bind('llm.request_decode_time'),
    inference: bind('llm.request_inference_time'),
    tpot: bind('llm.request_time_per_output_token'),
    requestPromptTokens: bind('llm.request_prompt_tokens'),
    requestGenerationTokens: bind('llm.request_generation_tokens'),
    requestPrefillKvComputedTokens: bind('llm.request_prefill_kv_computed_tokens'),
    iterationTokens: bind('llm.iteration_tokens'),
    paramsN: bind('llm.request_params_n'),
    paramsMaxTokens: bind('llm.request_params_max_tokens'),
    maxNumGenerationTokens: bind('llm.request_max_num_generation_tokens'),
    kvBlockLifetime: bind('llm.kv_block_lifetime'),
    kvBlockIdleBeforeEvict: bind('llm.kv_block_idle_before_evict'),
    kvBlockReuseGap: bind('llm.kv_block_reuse_gap'),
    specDrafts: bind('llm.spec_decode_num_drafts'),
    specDraftTokens: bind('llm.spec_decode_num_draft_tokens'),
    specAcceptedTokens: bind('llm.spec_decode_num_accepted_tokens'),
    specAcceptedPerPos: (position) =>
      (perPos[position] ??= bind('llm.spec_decode_num_accepted_tokens_per_pos', { position: String(position) })),
  };
}
