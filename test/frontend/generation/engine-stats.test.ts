import { expect } from 'chai';
import type { EngineCoreOutputs, GenRequestOutput } from '../../../schema/engine-ipc.js';
import { bindEngineSeries } from '../../../frontend/generation/engine-series.js';
import { EngineStats } from '../../../frontend/generation/engine-stats.js';
import type { LoggingStatLogger } from '../../../frontend/generation/logging-stat-logger.js';
import { FakeMetrics } from './fake-metrics.js';

const CACHE = { blockSize: 16, numBlocks: 64, enablePrefixCaching: true };

function out(
  requestId: string,
  index: number,
  tokens: number,
  extra: Partial<GenRequestOutput> = {},
): GenRequestOutput {
  return {
    requestId,
    index,
    newTokenIds: Array.from({ length: tokens }, () => 65),
    text: 'A'.repeat(tokens),
    events: [],
    ...extra,
  };
}

function step(
  timestamp: number,
  outputs: GenRequestOutput[],
  extra: Partial<EngineCoreOutputs> = {},
): EngineCoreOutputs {
  const gen = outputs.reduce((a, o) => a + o.newTokenIds.length, 0);
  return { timestamp, outputs, numPromptTokens: 0, numGenerationTokens: gen, ...extra };
}

describe('EngineStats', () => {
  let m: FakeMetrics;
  let now: number;
  let stats: EngineStats;

  beforeEach(() => {
    m = new FakeMetrics();
    now = 1000;
    stats = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => now);
  });

  it('should bind every series at start-up: counters at 0, gauges at 0, cache info at 1', () => {
    for (const r of ['stop', 'length', 'abort', 'error'])
      expect(m.values(`ts_request_success_total{finished_reason=${r}}`)).to.deep.equal([0]);
    expect(m.values('ts_prompt_tokens_total')).to.deep.equal([0]);
    expect(m.values('ts_num_requests_running')).to.deep.equal([0]);
    expect(m.values('ts_kv_cache_usage_ratio')).to.deep.equal([0]);
    expect(m.values('ts_cache_config_info{block_size=16,num_blocks=64,enable_prefix_caching=True}')).to.deep.equal([1]);
    expect(m.values('ts_time_to_first_token_seconds')).to.deep.equal([]);
  });

  it('should compute every interval of one request exactly (engine clock for intervals, frontend clock for TTFT/e2e)', () => {
    stats.addRequest('r1', 1000, 1, 3);
    now = 1100; // frontend clock: first token arrives 100 ms after arrival
    stats.onStep(
      step(
        5030,
        [
          out('r1', 0, 1, {
            events: [
              { type: 'QUEUED', ts: 5000 },
              { type: 'SCHEDULED', ts: 5010 },
            ],
            prefill: { numPromptTokens: 7, numCachedTokens: 0, numComputedTokens: 7 },
          }),
        ],
        { numPromptTokens: 7 },
      ),
    );
    now = 1150;
    stats.onStep(step(5050, [out('r1', 0, 1)]));
    now = 1200;
    stats.onStep(step(5080, [out('r1', 0, 1, { finishReason: 'length' })]));
    expect(m.values('ts_time_to_first_token_seconds')).to.deep.equal([0.1]);
    expect(m.values('ts_inter_token_latency_seconds').map((v) => +v.toFixed(9))).to.deep.equal([0.02, 0.03]);
    expect(m.values('ts_e2e_request_latency_seconds')).to.deep.equal([0.2]);
    expect(m.values('ts_request_queue_time_seconds')).to.deep.equal([0.01]);
    expect(m.values('ts_request_prefill_time_seconds')).to.deep.equal([0.02]);
    expect(m.values('ts_request_decode_time_seconds')).to.deep.equal([0.05]);
    expect(m.values('ts_request_inference_time_seconds')).to.deep.equal([0.07]);
    expect(m.values('ts_request_time_per_output_token_seconds')).to.deep.equal([0.025]);
    expect(m.values('ts_request_prompt_tokens')).to.deep.equal([7]);
    expect(m.values('ts_request_generation_tokens')).to.deep.equal([3]);
    expect(m.values('ts_iteration_tokens')).to.deep.equal([8, 1, 1]);
    expect(m.values('ts_prompt_tokens_total')).to.deep.equal([0, 7]);
    expect(m.values('ts_generation_tokens_total')).to.deep.equal([0, 1, 1, 1]);
    expect(m.values('ts_request_success_total{finished_reason=length}')).to.deep.equal([0, 1]);
    expect(m.values('ts_request_params_n')).to.deep.equal([1]);
    expect(m.values('ts_request_params_max_tokens')).to.deep.equal([3]);
    expect(m.values('ts_request_max_num_generation_tokens')).to.deep.equal([3]);
    expect(stats.inFlight).to.equal(0);
  });

  it('should observe TPOT 0 for a one-token sequence', () => {
    stats.addRequest('r1', 1000, 1, 1);
    stats.onStep(
      step(10, [
        out('r1', 0, 1, {
          events: [
            { type: 'QUEUED', ts: 1 },
            { type: 'SCHEDULED', ts: 2 },
          ],
          finishReason: 'length',
        }),
      ]),
    );
    expect(m.values('ts_request_time_per_output_token_seconds')).to.deep.equal([0]);
    expect(m.values('ts_request_decode_time_seconds')).to.deep.equal([0]);
  });

  it('should count n once per request with value n, max_tokens once per sequence, and success once per sequence', () => {
    stats.addRequest('r', 1000, 2, 2);
    const pf = { numPromptTokens: 5, numCachedTokens: 0, numComputedTokens: 5 };
    const ev = [
      { type: 'QUEUED' as const, ts: 1 },
      { type: 'SCHEDULED' as const, ts: 2 },
    ];
    stats.onStep(step(10, [out('r', 0, 1, { prefill: pf, events: ev }), out('r', 1, 1, { prefill: pf, events: ev })]));
    stats.onStep(step(20, [out('r', 0, 1, { finishReason: 'length' }), out('r', 1, 0, { finishReason: 'stop' })]));
    expect(m.values('ts_request_params_n')).to.deep.equal([2]);
    expect(m.values('ts_request_params_max_tokens')).to.deep.equal([2, 2]);
    expect(m.values('ts_request_max_num_generation_tokens')).to.deep.equal([2]);
    expect(m.sum('ts_request_success_total{finished_reason=length}')).to.equal(1);
    expect(m.sum('ts_request_success_total{finished_reason=stop}')).to.equal(1);
    expect(m.sum('ts_prompt_tokens_total')).to.equal(10);
    expect(m.values('ts_time_to_first_token_seconds')).to.have.length(2);
    expect(m.values('ts_iteration_tokens')).to.deep.equal([12, 1]);
  });

  it('should keep the first SCHEDULED after a preemption, and count prompt tokens and TTFT once', () => {
    stats.addRequest('r', 0, 1, 3);
    const pf = { numPromptTokens: 4, numCachedTokens: 0, numComputedTokens: 4 };
    stats.onStep(
      step(10, [
        out('r', 0, 1, {
          prefill: pf,
          events: [
            { type: 'QUEUED', ts: 1 },
            { type: 'SCHEDULED', ts: 2 },
          ],
        }),
      ]),
    );
    stats.onStep(
      step(50, [
        out('r', 0, 1, {
          events: [
            { type: 'PREEMPTED', ts: 20 },
            { type: 'SCHEDULED', ts: 40 },
          ],
        }),
      ]),
    );
    stats.onStep(step(60, [out('r', 0, 1, { finishReason: 'length' })]));
    expect(m.values('ts_request_queue_time_seconds')).to.deep.equal([0.001]);
    expect(m.values('ts_request_inference_time_seconds')).to.deep.equal([0.058]);
    expect(m.values('ts_inter_token_latency_seconds')).to.deep.equal([0.04, 0.01]);
    expect(m.sum('ts_prompt_tokens_total')).to.equal(4);
    expect(m.values('ts_time_to_first_token_seconds')).to.have.length(1);
  });

  it('should set gauges from scheduler stats and add their counter deltas', () => {
    stats.onStep(
      step(1, [], {
        stats: {
          numRunning: 3,
          numWaiting: 2,
          kvCacheUsage: 0.25,
          prefixCacheQueries: 40,
          prefixCacheHits: 32,
          numPreemptions: 1,
          numSteps: 1,
        },
      }),
    );
    stats.onStep(
      step(2, [], {
        stats: {
          numRunning: 0,
          numWaiting: 0,
          kvCacheUsage: 0,
          prefixCacheQueries: 0,
          prefixCacheHits: 0,
          numPreemptions: 0,
          numSteps: 1,
        },
      }),
    );
    expect(m.values('ts_num_requests_running')).to.deep.equal([0, 3, 0]);
    expect(m.values('ts_num_requests_waiting')).to.deep.equal([0, 2, 0]);
    expect(m.values('ts_kv_cache_usage_ratio')).to.deep.equal([0, 0.25, 0]);
    expect(m.values('ts_prefix_cache_queries_total')).to.deep.equal([0, 40]);
    expect(m.values('ts_prefix_cache_hits_total')).to.deep.equal([0, 32]);
    expect(m.values('ts_num_preemptions_total')).to.deep.equal([0, 1]);
    expect(m.values('ts_iteration_tokens')).to.deep.equal([]);
  });

  it('should zero the running, waiting and KV gauges on failAll (a dead engine kept showing its last load until its replacement was ready)', () => {
    stats.onStep(
      step(1, [], {
        stats: {
          numRunning: 2,
          numWaiting: 5,
          kvCacheUsage: 0.5,
          prefixCacheQueries: 0,
          prefixCacheHits: 0,
          numPreemptions: 0,
          numSteps: 1,
        },
      }),
    );
    stats.addRequest('a', 1000, 2, 5);
    stats.failAll('error');
    expect(m.values('ts_num_requests_running')).to.deep.equal([0, 2, 0]);
    expect(m.values('ts_num_requests_waiting')).to.deep.equal([0, 5, 0]);
    expect(m.values('ts_kv_cache_usage_ratio')).to.deep.equal([0, 0.5, 0]);
  });

  it('should count an engine abort of a sequence with no token in success{abort} and e2e only', () => {
    stats.addRequest('r', 1000, 1, 5);
    now = 1500;
    stats.onStep(step(10, [out('r', 0, 0, { events: [{ type: 'QUEUED', ts: 1 }], finishReason: 'abort' })]));
    expect(m.sum('ts_request_success_total{finished_reason=abort}')).to.equal(1);
    expect(m.values('ts_e2e_request_latency_seconds')).to.deep.equal([0.5]);
    expect(m.values('ts_request_queue_time_seconds')).to.deep.equal([]);
    expect(m.values('ts_request_params_n')).to.deep.equal([1]);
  });

  it('should ignore outputs of unknown requests and finish the rest with error on failAll', () => {
    stats.onStep(step(1, [out('nope', 0, 1)]));
    expect(m.values('ts_generation_tokens_total')).to.deep.equal([0]);
    stats.addRequest('a', 1000, 2, 5);
    stats.failAll('error');
    expect(m.sum('ts_request_success_total{finished_reason=error}')).to.equal(2);
    expect(stats.inFlight).to.equal(0);
  });
  it('should observe the prompt length of a sequence that finished with no token (from the engine, or from the token ids given)', () => {
    stats.addRequest('t', 1000, 1, 5);
    stats.onStep(
      step(10, [out('t', 0, 0, { events: [{ type: 'QUEUED', ts: 1 }], finishReason: 'abort', numPromptTokens: 9 })]),
    );
    stats.addRequest('ids', 1000, 2, 5, 4);
    stats.failAll('error');
    expect(m.values('ts_request_prompt_tokens')).to.deep.equal([9, 4, 4]);
    expect(m.values('ts_request_prefill_kv_computed_tokens')).to.deep.equal([0, 0, 0]);
    expect(m.values('ts_prompt_tokens_total')).to.deep.equal([0]);
  });

  it('should split prompt tokens by source (compute + cache hit = prompt) and observe the prefill KV computed per sequence', () => {
    stats.addRequest('r', 1000, 2, 3);
    const ev = [
      { type: 'QUEUED' as const, ts: 1 },
      { type: 'SCHEDULED' as const, ts: 2 },
    ];
    stats.onStep(
      step(10, [
        out('r', 0, 1, { events: ev, prefill: { numPromptTokens: 40, numCachedTokens: 0, numComputedTokens: 40 } }),
        out('r', 1, 1, { events: ev, prefill: { numPromptTokens: 40, numCachedTokens: 32, numComputedTokens: 8 } }),
      ]),
    );
    stats.onStep(
      step(20, [
        out('r', 0, 1, { finishReason: 'stop', numPromptTokens: 40 }),
        out('r', 1, 1, { finishReason: 'stop', numPromptTokens: 40 }),
      ]),
    );
    expect(m.values('ts_prompt_tokens_total')).to.deep.equal([0, 80]);
    expect(m.values('ts_prompt_tokens_by_source_total{source=local_compute}')).to.deep.equal([0, 48]);
    expect(m.values('ts_prompt_tokens_by_source_total{source=local_cache_hit}')).to.deep.equal([0, 32]);
    expect(m.values('ts_prompt_tokens_cached_total')).to.deep.equal([0, 32]);
    expect(m.values('ts_request_prefill_kv_computed_tokens')).to.deep.equal([40, 8]);
    expect(m.values('ts_request_prompt_tokens')).to.deep.equal([40, 40]);
    expect(m.values('ts_request_params_max_tokens')).to.deep.equal([3, 3]);
  });

  it('should observe each sampled KV eviction in the three residency histograms, in seconds', () => {
    const base = {
      numRunning: 0,
      numWaiting: 0,
      kvCacheUsage: 0,
      prefixCacheQueries: 0,
      prefixCacheHits: 0,
      numPreemptions: 0,
      numSteps: 1,
    };
    stats.onStep(
      step(1, [], {
        stats: {
          ...base,
          kvEvictions: [
            { lifetimeMs: 1500, idleMs: 250, reuseGapsMs: [100, 200, 300] },
            { lifetimeMs: 20, idleMs: 20, reuseGapsMs: [] },
          ],
        },
      }),
    );
    expect(m.values('ts_kv_block_lifetime_seconds')).to.deep.equal([1.5, 0.02]);
    expect(m.values('ts_kv_block_idle_before_evict_seconds')).to.deep.equal([0.25, 0.02]);
    expect(m.values('ts_kv_block_reuse_gap_seconds')).to.deep.equal([0.1, 0.2, 0.3]);
  });

  it("should give the stat log the prompt minus cached tokens of first outputs, not the step's recomputed tokens", () => {
    const logged: number[][] = [];
    const s2 = new EngineStats(bindEngineSeries(m, 'tiny', '1', CACHE), () => now, {
      recordStep: (p: number, g: number, f: number) => logged.push([p, g, f]),
      recordStats: () => undefined,
    } as unknown as LoggingStatLogger);
    s2.addRequest('r', 1000, 1, 3);
    s2.onStep(
      step(10, [out('r', 0, 1, { prefill: { numPromptTokens: 40, numCachedTokens: 32, numComputedTokens: 8 } })], {
        numPromptTokens: 8,
      }),
    );
    // A recompute after a preemption: the step computed 41 prompt tokens, none is a first output.
    s2.onStep(step(20, [out('r', 0, 1)], { numPromptTokens: 41 }));
    expect(logged).to.deep.equal([
      [8, 1, 1],
      [0, 1, 0],
    ]);
  });
});
