/**
 * The vLLM profile, generated from metrics.yaml: `metrics-vllm.yaml` (each keyed LLM entry with
 * vLLM's exact name and HELP from vllm/v1/metrics/loggers.py, cache_config_info with vLLM's
 * labels, the deprecated vllm:gpu_cache_usage_perc and time_per_output_token_seconds, the pipeline
 * families under vLLM-Omni's names; every other family copied as it is) and
 * Prometheus recording rules deriving vLLM's series from the default ts_* names. Text in, text
 * out: `npm run profiles` writes both files, and a test checks the committed ones are current.
 */
import { VLLM_OMNI_NAMES } from '../../schema/metric-catalog.js';

/** metrics.yaml key → [vLLM's name, vLLM's HELP]. */
export const VLLM_NAMES: Readonly<Record<string, readonly [string, string]>> = {
  'llm.prompt_tokens': ['vllm:prompt_tokens_total', 'Number of prefill tokens processed.'],
  'llm.generation_tokens': ['vllm:generation_tokens_total', 'Number of generation tokens processed.'],
  'llm.request_success': ['vllm:request_success_total', 'Count of successfully processed requests.'],
  'llm.num_preemptions': ['vllm:num_preemptions_total', 'Cumulative number of preemption from the engine.'],
  'llm.prefix_cache_queries': [
    'vllm:prefix_cache_queries_total',
    'Prefix cache queries, in terms of number of queried tokens.',
  ],
  'llm.prefix_cache_hits': ['vllm:prefix_cache_hits_total', 'Prefix cache hits, in terms of number of cached tokens.'],
  'llm.prompt_tokens_by_source': ['vllm:prompt_tokens_by_source_total', 'Number of prompt tokens by source.'],
  'llm.prompt_tokens_cached': ['vllm:prompt_tokens_cached_total', 'Number of cached prompt tokens (local + external).'],
  'llm.prompt_tokens_recomputed': [
    'vllm:prompt_tokens_recomputed_total',
    'Number of cached tokens recomputed for forward pass.',
  ],
  'llm.corrupted_requests': [
    'vllm:corrupted_requests_total',
    'Corrupted requests, in terms of total number of requests with NaNs in logits.',
  ],
  'llm.estimated_flops_per_gpu': [
    'vllm:estimated_flops_per_gpu_total',
    'Estimated number of floating point operations per GPU (for Model Flops Utilization calculations).',
  ],
  'llm.estimated_read_bytes_per_gpu': [
    'vllm:estimated_read_bytes_per_gpu_total',
    'Estimated number of bytes read from memory per GPU (for Model Flops Utilization calculations).',
  ],
  'llm.estimated_write_bytes_per_gpu': [
    'vllm:estimated_write_bytes_per_gpu_total',
    'Estimated number of bytes written to memory per GPU (for Model Flops Utilization calculations).',
  ],
  'llm.num_requests_running': ['vllm:num_requests_running', 'Number of requests in model execution batches.'],
  'llm.num_requests_waiting': ['vllm:num_requests_waiting', 'Number of requests waiting to be processed.'],
  'llm.num_requests_waiting_by_reason': [
    'vllm:num_requests_waiting_by_reason',
    "Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
  ],
  'llm.kv_cache_usage': ['vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.'],
  'llm.engine_sleep_state': [
    'vllm:engine_sleep_state',
    'Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake; weights_offloaded = 1 means sleep level 1; discard_all = 1 means sleep level 2.',
  ],
  'llm.cache_config_info': ['vllm:cache_config_info', 'Information of the LLMEngine CacheConfig'],
  'llm.time_to_first_token': ['vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.'],
  'llm.inter_token_latency': ['vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.'],
  'llm.request_time_per_output_token': [
    'vllm:request_time_per_output_token_seconds',
    'Histogram of time_per_output_token_seconds per request.',
  ],
  'llm.e2e_request_latency': ['vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.'],
  'llm.request_queue_time': [
    'vllm:request_queue_time_seconds',
    'Histogram of time spent in WAITING phase for request.',
  ],
  'llm.request_prefill_time': [
    'vllm:request_prefill_time_seconds',
    'Histogram of time spent in PREFILL phase for request.',
  ],
  'llm.request_decode_time': [
    'vllm:request_decode_time_seconds',
    'Histogram of time spent in DECODE phase for request.',
  ],
  'llm.request_inference_time': [
    'vllm:request_inference_time_seconds',
    'Histogram of time spent in RUNNING phase for request.',
  ],
  'llm.request_prompt_tokens': ['vllm:request_prompt_tokens', 'Number of prefill tokens processed.'],
  'llm.request_generation_tokens': ['vllm:request_generation_tokens', 'Number of generation tokens processed.'],
  'llm.request_params_max_tokens': ['vllm:request_params_max_tokens', 'Histogram of the max_tokens request parameter.'],
  'llm.request_max_num_generation_tokens': [
    'vllm:request_max_num_generation_tokens',
    'Histogram of maximum number of requested generation tokens.',
  ],
  'llm.iteration_tokens': ['vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.'],
  'llm.request_params_n': ['vllm:request_params_n', 'Histogram of the n request parameter.'],
  'llm.request_prefill_kv_computed_tokens': [
    'vllm:request_prefill_kv_computed_tokens',
    'Histogram of new KV tokens computed during prefill (excluding cached tokens).',
  ],
  'llm.spec_decode_num_drafts': ['vllm:spec_decode_num_drafts_total', 'Number of spec decoding drafts.'],
  'llm.spec_decode_num_draft_tokens': ['vllm:spec_decode_num_draft_tokens_total', 'Number of draft tokens.'],
  'llm.spec_decode_num_accepted_tokens': ['vllm:spec_decode_num_accepted_tokens_total', 'Number of accepted tokens.'],
  'llm.spec_decode_num_accepted_tokens_per_pos': [
    'vllm:spec_decode_num_accepted_tokens_per_pos_total',
    'Accepted tokens per draft position.',
  ],
  'llm.kv_block_lifetime': [
    'vllm:kv_block_lifetime_seconds',
    'Histogram of KV cache block lifetime from allocation to eviction. Sampled metrics (controlled by --kv-cache-metrics-sample).',
  ],
  'llm.kv_block_idle_before_evict': [
    'vllm:kv_block_idle_before_evict_seconds',
    'Histogram of idle time before KV cache block eviction. Sampled metrics (controlled by --kv-cache-metrics-sample).',
  ],
  'llm.kv_block_reuse_gap': [
    'vllm:kv_block_reuse_gap_seconds',
    'Histogram of time gaps between consecutive KV cache block accesses. Only the most recent accesses are recorded (ring buffer). Sampled metrics (controlled by --kv-cache-metrics-sample).',
  ],
};

const HEADER = `# yaml-language-server: $schema=./schema/metrics.schema.json
#
# The vLLM profile: metrics.yaml with vLLM's exact names, HELP texts and labels for the LLM
# families (bound by the same \`key:\`s), for the gateways, routers, autoscalers and dashboards
# that read vllm:* from the pod. Select it with \`tsserve start --metrics-profile vllm\` (or
# --metrics-config metrics-vllm.yaml). The TorchServe and HTTP families are metrics.yaml's.
# Generated from metrics.yaml by \`npm run profiles\` (tools/profiles/vllm-profile.ts);
# docs/llm-metrics.md has the mapping.
`;

/**
 * vLLM's CacheConfig fields that mean something here, as cache_config_info's labels (vLLM has
 * them all; gpu_memory_utilization, swap_space and the like have no meaning on this engine).
 */
const CACHE_CONFIG_LABELS = [
  'block_size',
  'num_gpu_blocks',
  'num_cpu_blocks',
  'enable_prefix_caching',
  'cache_dtype',
  'sliding_window',
  'prefix_caching_hash_algo',
]
  .map((l) => `"${l}"`)
  .join(', ');

const TIME_PER_OUTPUT_TOKEN = [
  '    # Deprecated in vLLM 0.11 (renamed inter_token_latency_seconds) and hidden since; the same',
  '    # observations as llm.inter_token_latency. Shown with --show-hidden-metrics-for-version 0.0.',
  '    - name: vllm:time_per_output_token_seconds',
  '      key: llm.time_per_output_token',
  '      unit: Seconds',
  '      dimensions: [*llm_model, *engine]',
  '      help: "Histogram of time per output token in seconds.DEPRECATED: Use vllm:inter_token_latency_seconds instead."',
  '      help_verbatim: true',
  '      deprecated: {since: "0.1", replacement: "vllm:inter_token_latency_seconds", hidden_since: "0.1"}',
];

const GPU_CACHE_USAGE = [
  '    # Deprecated in vLLM 0.9 and hidden from 0.11: still read by older gateways, the',
  '    # production-stack router and AIBrix. Shown with --show-hidden-metrics-for-version 0.0.',
  '    - name: vllm:gpu_cache_usage_perc',
  '      key: llm.gpu_cache_usage',
  '      unit: Ratio',
  '      dimensions: [*llm_model, *engine]',
  '      help: "GPU KV-cache usage. 1 means 100 percent usage.DEPRECATED: Use vllm:kv_cache_usage_perc instead."',
  '      help_verbatim: true',
  '      merge: livemax',
  '      deprecated: {since: "0.1", replacement: "vllm:kv_cache_usage_perc", hidden_since: "0.1"}',
];

/** metrics-vllm.yaml's text from metrics.yaml's; throws when a key of VLLM_NAMES is not declared. */
export function vllmProfileYaml(metricsYaml: string): string {
  const at = metricsYaml.indexOf('\ndimensions:');
  if (at < 0) throw new Error('metrics.yaml: no top-level dimensions: block');
  const lines = metricsYaml.slice(at + '\ndimensions:'.length).split('\n');
  const done = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const m = /^ {6}key: (\S+)$/.exec(lines[i]!);
    const v = m === null ? undefined : VLLM_NAMES[m[1]!];
    if (m === null || v === undefined) continue;
    const key = m[1]!;
    done.add(key);
    if (!lines[i - 1]!.startsWith('    - name: ')) throw new Error(`metrics.yaml: key ${key} does not follow its name`);
    lines[i - 1] = `    - name: ${v[0]}`;
    for (let j = i + 1; j < i + 6 && j < lines.length; j++) {
      if (lines[j]!.startsWith('      help: ')) {
        // vLLM's text exactly: no " (unit: …)" suffix in # HELP.
        lines[j] = `      help: ${JSON.stringify(v[1])}\n      help_verbatim: true`;
        break;
      }
    }
    if (key === 'llm.cache_config_info') {
      for (let j = i + 1; j < i + 4; j++) {
        if (lines[j]!.startsWith('      dimensions: '))
          lines[j] = `      dimensions: [*llm_model, *engine, ${CACHE_CONFIG_LABELS}]`;
      }
    }
    if (key === 'llm.kv_cache_usage') {
      let k = i + 1;
      while (!lines[k]!.startsWith('      merge: ')) k++;
      lines.splice(k + 1, 0, ...GPU_CACHE_USAGE);
    }
    if (key === 'llm.inter_token_latency') {
      // After the entry (up to the next one or a comment before it), with the same buckets.
      let k = i + 1;
      while (!/^ {4}(- name: |#)/.test(lines[k]!)) k++;
      const buckets = lines.slice(i, k).filter((l) => l.startsWith('      buckets: '));
      lines.splice(k, 0, ...TIME_PER_OUTPUT_TOKEN, ...buckets);
      i = k + TIME_PER_OUTPUT_TOKEN.length + buckets.length - 1;
    }
  }
  // The pipeline families under vLLM-Omni's names (bound by ours, else by these: frontend/pipeline/omni-names.ts).
  const omni = VLLM_OMNI_NAMES as Readonly<Record<string, string>>;
  for (let i = 0; i < lines.length; i++) {
    const m = /^ {4}- name: (ts_omni_\S+)$/.exec(lines[i]!);
    const to = m === null ? undefined : omni[m[1]!];
    if (m === null) continue;
    if (to === undefined)
      throw new Error(`metrics.yaml: pipeline family ${m[1]} has no vLLM-Omni name (VLLM_OMNI_NAMES)`);
    lines[i] = `    - name: ${to}`;
  }
  const missing = Object.keys(VLLM_NAMES).filter((k) => !done.has(k));
  if (missing.length > 0) throw new Error(`metrics.yaml declares no family with key ${missing.join(', ')}`);
  return HEADER + '\ndimensions:' + lines.join('\n');
}

/** Recording rules giving vLLM's series from metrics.yaml's default names (labels kept). */
export function vllmRecordingRules(metricsYaml: string): string {
  const ours = new Map<string, { name: string; kind: string }>();
  let kind = '';
  let name = '';
  for (const l of metricsYaml.split('\n')) {
    const k = /^ {2}(counter|gauge|histogram):/.exec(l);
    if (k !== null) kind = k[1]!;
    const n = /^ {4}- name: (\S+)$/.exec(l);
    if (n !== null) name = n[1]!;
    const key = /^ {6}key: (\S+)$/.exec(l);
    if (key !== null && VLLM_NAMES[key[1]!] !== undefined) ours.set(key[1]!, { name, kind });
  }
  const out = [
    "# Generated from metrics.yaml and the vLLM profile's names by `npm run profiles` (tools/profiles/vllm-profile.ts).",
    "# vLLM's series from tsserve's default ts_* names (labels kept: model_name, engine, ...).",
    'groups:',
    '  - name: tsserve-vllm-names',
    '    rules:',
  ];
  const rule = (record: string, expr: string): void => {
    out.push(`      - record: ${record}`, `        expr: ${expr}`);
  };
  for (const [key, [vname]] of Object.entries(VLLM_NAMES)) {
    const o = ours.get(key);
    if (o === undefined) throw new Error(`metrics.yaml declares no family with key ${key}`);
    if (key === 'llm.cache_config_info')
      rule(vname, `label_replace(${o.name}, "num_gpu_blocks", "$1", "num_blocks", "(.*)")`);
    else if (o.kind === 'histogram') for (const s of ['_bucket', '_sum', '_count']) rule(vname + s, o.name + s);
    else rule(vname, o.name);
    if (key === 'llm.kv_cache_usage') rule('vllm:gpu_cache_usage_perc', o.name);
  }
  return out.join('\n') + '\n';
}
