/**
 * The vLLM families added with vLLM's current catalog, as the stats processor fills them from
 * step messages: `num_requests_waiting_by_reason` (every waiting request waits for capacity),
 * `prompt_tokens_recomputed` (summed from the first outputs' prefill stats), and the hidden
 * deprecated `time_per_output_token_seconds` (the same samples as inter-token latency).
 */
import { expect } from 'chai';
import type { EngineCoreOutputs, GenRequestOutput, GenSchedulerStats } from '../../../schema/engine-ipc.js';
import type { MetricSpec } from '../../../schema/types.js';
import { bindEngineSeries } from '../../../frontend/generation/engine-series.js';
import { EngineStats } from '../../../frontend/generation/engine-stats.js';
import { loadMetricsConfig, profileConfigPath } from '../../../schema/config/load.js';
import { FakeMetrics } from './fake-metrics.js';

const CACHE = { blockSize: 16, numBlocks: 64, enablePrefixCaching: true };

function stats(numWaiting: number): GenSchedulerStats {
  return {
    numRunning: 1,
    numWaiting,
    kvCacheUsage: 0.5,
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    numPreemptions: 0,
    numSteps: 1,
  };
}

function out(requestId: string, extra: Partial<GenRequestOutput> = {}): GenRequestOutput {
  return { requestId, index: 0, newTokenIds: [65], text: 'A', events: [], ...extra };
}

function step(timestamp: number, outputs: GenRequestOutput[], st?: GenSchedulerStats): EngineCoreOutputs {
  return {
    timestamp,
    outputs,
    numPromptTokens: 0,
    numGenerationTokens: outputs.length,
    ...(st !== undefined ? { stats: st } : {}),
  };
}

/** The vLLM profile's keyed entries: the fake then names its series vllm:… and knows the hidden alias. */
function profileByKey(): ReadonlyMap<string, MetricSpec> {
  const r = loadMetricsConfig(profileConfigPath('vllm')!);
  if (!r.ok) throw new Error('metrics-vllm.yaml does not load');
  return new Map(r.config.metrics.filter((m) => m.key !== undefined).map((m) => [m.key as string, m]));
}

describe('EngineStats: the vLLM families of the current catalog', () => {
  it("should set waiting_by_reason{capacity} to each stats record's waiting count and keep deferred at 0", () => {
    const m = new FakeMetrics();
    const es = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => 1000);
    es.onStep(step(1, [], stats(3)));
    es.onStep(step(2, [], stats(1)));
    expect(m.values('ts_num_requests_waiting')).to.deep.equal([0, 3, 1]);
    expect(m.values('ts_num_requests_waiting_by_reason{reason=capacity}')).to.deep.equal([0, 3, 1]);
    expect(m.values('ts_num_requests_waiting_by_reason{reason=deferred}')).to.deep.equal([0]);
    // A dead engine holds no waiting request: both go to 0 with the other gauges.
    es.failAll('error');
    expect(m.values('ts_num_requests_waiting_by_reason{reason=capacity}')).to.deep.equal([0, 3, 1, 0]);
  });

  it('should add the recomputed tokens of the prefill stats of every first output in a step, once per sequence', () => {
    const m = new FakeMetrics();
    const es = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => 1000);
    es.addRequest('a', 1000, 1, 2);
    es.addRequest('b', 1000, 1, 2);
    const pf = { numPromptTokens: 32, numCachedTokens: 16, numComputedTokens: 16, numRecomputedTokens: 16 };
    es.onStep(step(10, [out('a', { prefill: pf }), out('b', { prefill: { ...pf, numRecomputedTokens: undefined } })]));
    // A repeated prefill record (a relayed duplicate) does not count twice.
    es.onStep(step(20, [out('a', { prefill: pf, finishReason: 'length' }), out('b', { finishReason: 'length' })]));
    expect(m.values('ts_prompt_tokens_recomputed_total')).to.deep.equal([0, 16]);
    expect(m.values('ts_prompt_tokens_cached_total')).to.deep.equal([0, 32]);
  });

  it('should observe the hidden time_per_output_token_seconds with exactly the inter-token latency samples (vLLM profile)', () => {
    const m = new FakeMetrics(profileByKey());
    const es = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => 1000);
    es.addRequest('r', 1000, 1, 3);
    es.onStep(step(5000, [out('r')]));
    es.onStep(step(5020, [out('r')]));
    es.onStep(step(5050, [out('r', { finishReason: 'length' })]));
    const itl = m.values('vllm:inter_token_latency_seconds').map((v) => +v.toFixed(9));
    expect(itl).to.deep.equal([0.02, 0.03]);
    expect(m.values('vllm:time_per_output_token_seconds').map((v) => +v.toFixed(9))).to.deep.equal(itl);
  });

  it('should leave the alias off with the default metrics.yaml, which does not declare it', () => {
    const m = new FakeMetrics();
    const es = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => 1000);
    es.addRequest('r', 1000, 1, 2);
    es.onStep(step(5000, [out('r')]));
    es.onStep(step(5020, [out('r', { finishReason: 'length' })]));
    expect(
      [...m.records.keys()].filter((k) => k.includes('time_per_output_token_seconds') && !k.includes('request')),
    ).to.deep.equal([]);
  });
});
