#!/usr/bin/env python3
"""Writes metrics-vllm.yaml from metrics.yaml: each keyed LLM entry gets vLLM's exact name and HELP
(vllm/v1/metrics/loggers.py), cache_config_info vLLM's labels, plus the deprecated
vllm:gpu_cache_usage_perc. Everything else (TorchServe and HTTP families) is copied as is.
Run from the repo root: python3 tools/profiles/vllm-names.py > metrics-vllm.yaml"""
import re, sys

V = {
 'llm.prompt_tokens': ('vllm:prompt_tokens_total', 'Number of prefill tokens processed.'),
 'llm.generation_tokens': ('vllm:generation_tokens_total', 'Number of generation tokens processed.'),
 'llm.request_success': ('vllm:request_success_total', 'Count of successfully processed requests.'),
 'llm.num_preemptions': ('vllm:num_preemptions_total', 'Cumulative number of preemption from the engine.'),
 'llm.prefix_cache_queries': ('vllm:prefix_cache_queries_total', 'Prefix cache queries, in terms of number of queried tokens.'),
 'llm.prefix_cache_hits': ('vllm:prefix_cache_hits_total', 'Prefix cache hits, in terms of number of cached tokens.'),
 'llm.prompt_tokens_by_source': ('vllm:prompt_tokens_by_source_total', 'Number of prompt tokens by source.'),
 'llm.prompt_tokens_cached': ('vllm:prompt_tokens_cached_total', 'Number of cached prompt tokens (local + external).'),
 'llm.num_requests_running': ('vllm:num_requests_running', 'Number of requests in model execution batches.'),
 'llm.num_requests_waiting': ('vllm:num_requests_waiting', 'Number of requests waiting to be processed.'),
 'llm.kv_cache_usage': ('vllm:kv_cache_usage_perc', 'KV-cache usage. 1 means 100 percent usage.'),
 'llm.cache_config_info': ('vllm:cache_config_info', 'Information of the LLMEngine CacheConfig'),
 'llm.time_to_first_token': ('vllm:time_to_first_token_seconds', 'Histogram of time to first token in seconds.'),
 'llm.inter_token_latency': ('vllm:inter_token_latency_seconds', 'Histogram of inter-token latency in seconds.'),
 'llm.request_time_per_output_token': ('vllm:request_time_per_output_token_seconds', 'Histogram of time_per_output_token_seconds per request.'),
 'llm.e2e_request_latency': ('vllm:e2e_request_latency_seconds', 'Histogram of e2e request latency in seconds.'),
 'llm.request_queue_time': ('vllm:request_queue_time_seconds', 'Histogram of time spent in WAITING phase for request.'),
 'llm.request_prefill_time': ('vllm:request_prefill_time_seconds', 'Histogram of time spent in PREFILL phase for request.'),
 'llm.request_decode_time': ('vllm:request_decode_time_seconds', 'Histogram of time spent in DECODE phase for request.'),
 'llm.request_inference_time': ('vllm:request_inference_time_seconds', 'Histogram of time spent in RUNNING phase for request.'),
 'llm.request_prompt_tokens': ('vllm:request_prompt_tokens', 'Number of prefill tokens processed.'),
 'llm.request_generation_tokens': ('vllm:request_generation_tokens', 'Number of generation tokens processed.'),
 'llm.request_params_max_tokens': ('vllm:request_params_max_tokens', 'Histogram of the max_tokens request parameter.'),
 'llm.request_max_num_generation_tokens': ('vllm:request_max_num_generation_tokens', 'Histogram of maximum number of requested generation tokens.'),
 'llm.iteration_tokens': ('vllm:iteration_tokens_total', 'Histogram of number of tokens per engine_step.'),
 'llm.request_params_n': ('vllm:request_params_n', 'Histogram of the n request parameter.'),
 'llm.request_prefill_kv_computed_tokens': ('vllm:request_prefill_kv_computed_tokens', 'Histogram of new KV tokens computed during prefill (excluding cached tokens).'),
 'llm.spec_decode_num_drafts': ('vllm:spec_decode_num_drafts_total', 'Number of spec decoding drafts.'),
 'llm.spec_decode_num_draft_tokens': ('vllm:spec_decode_num_draft_tokens_total', 'Number of draft tokens.'),
 'llm.spec_decode_num_accepted_tokens': ('vllm:spec_decode_num_accepted_tokens_total', 'Number of accepted tokens.'),
 'llm.spec_decode_num_accepted_tokens_per_pos': ('vllm:spec_decode_num_accepted_tokens_per_pos_total', 'Accepted tokens per draft position.'),
 'llm.kv_block_lifetime': ('vllm:kv_block_lifetime_seconds', 'Histogram of KV cache block lifetime from allocation to eviction. Sampled metrics (controlled by --kv-cache-metrics-sample).'),
 'llm.kv_block_idle_before_evict': ('vllm:kv_block_idle_before_evict_seconds', 'Histogram of idle time before KV cache block eviction. Sampled metrics (controlled by --kv-cache-metrics-sample).'),
 'llm.kv_block_reuse_gap': ('vllm:kv_block_reuse_gap_seconds', 'Histogram of time gaps between consecutive KV cache block accesses. Only the most recent accesses are recorded (ring buffer). Sampled metrics (controlled by --kv-cache-metrics-sample).'),
}

src = open('metrics.yaml').read()
head, sep, body = src.partition('\ndimensions:')
out_head = """# yaml-language-server: $schema=./schema/metrics.schema.json
#
# The vLLM profile: metrics.yaml with vLLM's exact names, HELP texts and labels for the LLM
# families (bound by the same `key:`s), for the gateways, routers, autoscalers and dashboards
# that read vllm:* from the pod. Select it with `tsserve start --metrics-profile vllm` (or
# --metrics-config metrics-vllm.yaml). The TorchServe and HTTP families are metrics.yaml's.
# Generated by tools/profiles/vllm-names.py from metrics.yaml; docs/llm-metrics.md has the mapping.
"""
lines = body.split('\n')
done = set()
for i, l in enumerate(lines):
    m = re.match(r'^      key: (\S+)$', l)
    if not m or m.group(1) not in V:
        continue
    key = m.group(1); name, help_ = V[key]; done.add(key)
    assert lines[i - 1].startswith('    - name: ')
    lines[i - 1] = '    - name: ' + name
    for j in range(i + 1, i + 6):
        if lines[j].startswith('      help: '):
            lines[j] = '      help: "%s"' % help_
            break
    if key == 'llm.cache_config_info':
        for j in range(i + 1, i + 4):
            if lines[j].startswith('      dimensions: '):
                lines[j] = '      dimensions: [*engine, "block_size", "num_gpu_blocks", "enable_prefix_caching"]'
    if key == 'llm.kv_cache_usage':
        k = i + 1
        while not lines[k].startswith('      merge: '):
            k += 1
        lines[k + 1:k + 1] = [
            '    # Deprecated in vLLM 0.9 and hidden from 0.11: still read by older gateways, the',
            '    # production-stack router and AIBrix. Shown with --show-hidden-metrics-for-version 0.0.',
            '    - name: vllm:gpu_cache_usage_perc',
            '      key: llm.gpu_cache_usage',
            '      unit: Ratio',
            '      dimensions: [*llm_model, *engine]',
            '      help: "GPU KV-cache usage. 1 means 100 percent usage."',
            '      merge: livemax',
            '      deprecated: {since: "0.1", replacement: "vllm:kv_cache_usage_perc", hidden_since: "0.1"}',
        ]
missing = set(V) - done
assert not missing, missing
sys.stdout.write(out_head + "\ndimensions:" + "\n".join(lines))
