/**
 * The one catalog of the metrics the server's own code binds: by name (the frontend metrics of
 * `ts_metrics`, the self-metrics, the pipeline families) and by `key:` (the engine families,
 * whatever the yaml names them). It is `as const`, so the names are types: a binding with a
 * misspelt name or key is a compile error, and the start-up checks of metrics.yaml
 * (`checkFrontendMetrics`, `checkEngineMetrics`) walk these same tables.
 */
import type { MetricType } from './types.js';

/** How the server records a metric it binds by name: the dimensions it supplies, the types it takes. */
export interface NameBinding {
  readonly dims: readonly string[];
  readonly types: readonly MetricType[];
}

/** How the frontend fills an engine family bound by key. */
export interface KeyBinding {
  readonly type: MetricType;
  /** Labels beyond model_name and engine. */
  readonly extra: readonly string[];
  /**
   * An info gauge: the labels are a menu, the yaml declares any subset of model_name, engine and
   * `extra` (vLLM's `cache_config_info` names the block count num_gpu_blocks; the vLLM profile adds model_name).
   */
  readonly info?: true;
}

/** Every frontend metric of `ts_metrics` the server records, with the dimensions it supplies (besides the hostname). */
export const FRONTEND_BINDINGS = {
  Requests2XX: { dims: ['Level'], types: ['counter'] },
  Requests4XX: { dims: ['Level'], types: ['counter'] },
  Requests5XX: { dims: ['Level'], types: ['counter'] },
  ts_inference_requests_total: { dims: ['model_name', 'model_version'], types: ['counter'] },
  ts_inference_latency_microseconds: { dims: ['model_name', 'model_version'], types: ['counter'] },
  ts_queue_latency_microseconds: { dims: ['model_name', 'model_version'], types: ['counter'] },
  QueueTime: { dims: ['Level'], types: ['gauge', 'histogram'] },
  WorkerThreadTime: { dims: ['Level'], types: ['gauge', 'histogram'] },
  WorkerLoadTime: { dims: ['WorkerName', 'Level'], types: ['gauge', 'histogram'] },
  http_requests_total: { dims: ['handler', 'method', 'status'], types: ['counter'] },
  http_request_size_bytes: { dims: ['handler'], types: ['histogram'] },
  http_response_size_bytes: { dims: ['handler'], types: ['histogram'] },
  http_request_duration_seconds: { dims: ['handler', 'method'], types: ['histogram'] },
  http_request_duration_highr_seconds: { dims: [], types: ['histogram'] },
  // Image classifier models: images the frontend's decoder refused.
  ts_image_refused_total: { dims: ['model_name', 'reason'], types: ['counter'] },
  // Embedding models on /v1/embeddings.
  ts_embedding_requests_total: { dims: ['model_name'], types: ['counter'] },
  ts_embedding_prompt_tokens_total: { dims: ['model_name'], types: ['counter'] },
  ts_embedding_request_latency_seconds: { dims: ['model_name'], types: ['histogram'] },
} as const satisfies Readonly<Record<string, NameBinding>>;

/**
 * The self-metrics, in render order: reserved names, each declared (type, unit, dimensions, help)
 * in the `tsserve_metrics:` section of the bundled metrics.yaml, which `selfMetricSpecs`
 * (`schema/config/self-section.ts`) reads.
 */
export const SELF_METRICS = [
  'tsserve_datapoints_dropped_total',
  'tsserve_series',
  'tsserve_series_overflow_total',
  'tsserve_flush_batches_total',
  'tsserve_flush_datapoints_total',
  'tsserve_sink_errors_total',
  'tsserve_worker_restarts_total',
  'tsserve_front_restarts_total',
  'tsserve_requests_refused_total',
  'tsserve_worker_output_faults_total',
  'tsserve_log_errors_total',
  'tsserve_cache_evictions_total',
  'tsserve_spans_dropped_total',
] as const;

/** The pipeline families (metrics.yaml; vLLM-Omni's names in metrics-vllm.yaml), bound by name when the yaml declares them. */
export const PIPELINE_METRICS = [
  'ts_omni_num_requests_running',
  'ts_omni_num_requests_waiting',
  'ts_omni_e2e_request_latency_seconds',
  'ts_omni_requests_success_total',
  'ts_omni_transfer_size_bytes',
  'ts_omni_transfer_tx_seconds',
  'ts_omni_transfer_rx_seconds',
  'ts_omni_transfer_in_flight_seconds',
  'ts_omni_audio_skipped_requests_total',
  'ts_omni_audio_ttfp_seconds',
  'ts_omni_audio_duration_seconds',
  'ts_omni_audio_rtf',
  'ts_omni_audio_frames_total',
  'ts_omni_audio_underrun_seconds',
  'ts_omni_audio_continuity_ok_total',
  'ts_omni_prompt_tokens_total',
  'ts_omni_generation_tokens_total',
  'ts_omni_stage_inflight_requests',
] as const;

/**
 * vLLM-Omni's name of each pipeline family (its metrics definitions: the `vllm_omni:`
 * prefix, `_s` for seconds, `_total` on counters), as the vLLM profile declares them; the
 * pipeline binds a family by our name, else by this one.
 */
export const VLLM_OMNI_NAMES: Readonly<Record<(typeof PIPELINE_METRICS)[number], string>> = {
  ts_omni_num_requests_running: 'vllm_omni:num_requests_running',
  ts_omni_num_requests_waiting: 'vllm_omni:num_requests_waiting',
  ts_omni_e2e_request_latency_seconds: 'vllm_omni:e2e_request_latency_s',
  ts_omni_requests_success_total: 'vllm_omni:requests_success_total',
  ts_omni_transfer_size_bytes: 'vllm_omni:transfer_size_bytes',
  ts_omni_transfer_tx_seconds: 'vllm_omni:transfer_tx_s',
  ts_omni_transfer_rx_seconds: 'vllm_omni:transfer_rx_s',
  ts_omni_transfer_in_flight_seconds: 'vllm_omni:transfer_in_flight_s',
  ts_omni_audio_skipped_requests_total: 'vllm_omni:audio_skipped_requests_total',
  ts_omni_audio_ttfp_seconds: 'vllm_omni:audio_ttfp_s',
  ts_omni_audio_duration_seconds: 'vllm_omni:audio_duration_s',
  ts_omni_audio_rtf: 'vllm_omni:audio_rtf',
  ts_omni_audio_frames_total: 'vllm_omni:audio_frames_total',
  ts_omni_audio_underrun_seconds: 'vllm_omni:audio_underrun_s',
  ts_omni_audio_continuity_ok_total: 'vllm_omni:audio_continuity_ok_total',
  ts_omni_prompt_tokens_total: 'vllm_omni:prompt_tokens_total',
  ts_omni_generation_tokens_total: 'vllm_omni:generation_tokens_total',
  ts_omni_stage_inflight_requests: 'vllm_omni:stage_inflight_requests',
};

/** cache_config_info's labels: ours (num_blocks) and vLLM's CacheConfig field names, values as Python's str() prints them. */
const CACHE_LABELS = [
  'block_size',
  'num_blocks',
  'num_gpu_blocks',
  'num_cpu_blocks',
  'enable_prefix_caching',
  'cache_dtype',
  'sliding_window',
  'prefix_caching_hash_algo',
] as const;

/** The engine families by metrics.yaml `key:`, and how the frontend fills each. */
export const ENGINE_BINDINGS = {
  'llm.num_requests_running': { type: 'gauge', extra: [] },
  'llm.num_requests_waiting': { type: 'gauge', extra: [] },
  'llm.num_requests_waiting_by_reason': { type: 'gauge', extra: ['reason'] },
  'llm.kv_cache_usage': { type: 'gauge', extra: [] },
  'llm.engine_sleep_state': { type: 'gauge', extra: ['sleep_state'] },
  'llm.gpu_cache_usage': { type: 'gauge', extra: [] },
  'llm.cache_config_info': { type: 'gauge', extra: CACHE_LABELS, info: true },
  'llm.prompt_tokens': { type: 'counter', extra: [] },
  'llm.prompt_tokens_by_source': { type: 'counter', extra: ['source'] },
  'llm.prompt_tokens_cached': { type: 'counter', extra: [] },
  'llm.prompt_tokens_recomputed': { type: 'counter', extra: [] },
  'llm.generation_tokens': { type: 'counter', extra: [] },
  'llm.request_success': { type: 'counter', extra: ['finished_reason'] },
  'llm.num_preemptions': { type: 'counter', extra: [] },
  'llm.corrupted_requests': { type: 'counter', extra: [] },
  'llm.estimated_flops_per_gpu': { type: 'counter', extra: [] },
  'llm.estimated_read_bytes_per_gpu': { type: 'counter', extra: [] },
  'llm.estimated_write_bytes_per_gpu': { type: 'counter', extra: [] },
  'llm.detokenizer_flushes': { type: 'counter', extra: [] },
  'llm.prefix_cache_queries': { type: 'counter', extra: [] },
  'llm.prefix_cache_hits': { type: 'counter', extra: [] },
  'llm.time_to_first_token': { type: 'histogram', extra: [] },
  'llm.inter_token_latency': { type: 'histogram', extra: [] },
  'llm.time_per_output_token': { type: 'histogram', extra: [] },
  'llm.e2e_request_latency': { type: 'histogram', extra: [] },
  'llm.request_queue_time': { type: 'histogram', extra: [] },
  'llm.request_prefill_time': { type: 'histogram', extra: [] },
  'llm.request_decode_time': { type: 'histogram', extra: [] },
  'llm.request_inference_time': { type: 'histogram', extra: [] },
  'llm.request_time_per_output_token': { type: 'histogram', extra: [] },
  'llm.request_prompt_tokens': { type: 'histogram', extra: [] },
  'llm.request_generation_tokens': { type: 'histogram', extra: [] },
  'llm.request_prefill_kv_computed_tokens': { type: 'histogram', extra: [] },
  'llm.iteration_tokens': { type: 'histogram', extra: [] },
  'llm.request_params_n': { type: 'histogram', extra: [] },
  'llm.request_params_max_tokens': { type: 'histogram', extra: [] },
  'llm.request_max_num_generation_tokens': { type: 'histogram', extra: [] },
  'llm.kv_block_lifetime': { type: 'histogram', extra: [] },
  'llm.kv_block_idle_before_evict': { type: 'histogram', extra: [] },
  'llm.kv_block_reuse_gap': { type: 'histogram', extra: [] },
  'llm.spec_decode_num_drafts': { type: 'counter', extra: [] },
  'llm.spec_decode_num_draft_tokens': { type: 'counter', extra: [] },
  'llm.spec_decode_num_accepted_tokens': { type: 'counter', extra: [] },
  'llm.spec_decode_num_accepted_tokens_per_pos': { type: 'counter', extra: ['position'] },
} as const satisfies Readonly<Record<string, KeyBinding>>;

/** A frontend metric of `ts_metrics` the server records. */
export type FrontendMetricName = keyof typeof FRONTEND_BINDINGS;
/** A self-metric. */
export type SelfMetricName = (typeof SELF_METRICS)[number];
/** A pipeline family. */
export type PipelineMetricName = (typeof PIPELINE_METRICS)[number];
/** Any name the server's code binds a metric by. */
export type BoundMetricName = FrontendMetricName | SelfMetricName | PipelineMetricName;
/** A metrics.yaml `key:` the engine binds. */
export type EngineKey = keyof typeof ENGINE_BINDINGS;
