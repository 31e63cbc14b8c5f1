/**
 * The vLLM families added with vLLM's current catalog, as the stats processor fills them from
 * step messages: `num_requests_waiting_by_reason` (every waiting request waits for capacity),
 * `prompt_tokens_recomputed` (summed from the first outputs' prefill stats), and the hidden
 * deprecated `time_per_output_token_seconds` (the same samples as inter-token latency),
 * `corrupted_requests` (only with the NaN scan, once per finished corrupted sequence), the MFU
 * counters (at 0 from start-up, summed from the stats' estimate) and the `repetition` reason at 0.
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

  it('should count each finished sequence flagged corrupted once, and register the family only with the NaN scan', () => {
    const m = new FakeMetrics();
    const es = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE, undefined, true, true), () => 1000);
    es.addRequest('a', 1000, 2, 2);
    es.addRequest('b', 1000, 1, 2);
    es.onStep(step(10, [out('a'), { ...out('a'), index: 1 }, out('b')]));
    es.onStep(
      step(20, [
        out('a', { finishReason: 'length', corrupted: true }),
        { ...out('a'), index: 1, finishReason: 'length' },
        out('b', { finishReason: 'error', corrupted: true }),
      ]),
    );
    // A relayed duplicate of a finished output counts nothing more.
    es.onStep(step(30, [out('b', { finishReason: 'error', corrupted: true })]));
    expect(m.values('ts_corrupted_requests_total')).to.deep.equal([0, 1, 1]);
    expect(m.values('ts_request_success_total{finished_reason=length}')).to.deep.equal([0, 1, 1]);

    const off = new FakeMetrics();
    const es2 = new EngineStats(bindEngineSeries(off, 'tiny', '0', CACHE), () => 1000);
    es2.addRequest('a', 1000, 1, 2);
    es2.onStep(step(10, [out('a', { finishReason: 'length', corrupted: true })]));
    expect([...off.records.keys()].filter((k) => k.includes('corrupted'))).to.deep.equal([]);
  });

  it("should hold the MFU counters at 0 from start-up and add each stats record's estimate", () => {
    const m = new FakeMetrics();
    const es = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => 1000);
    es.onStep(step(1, [], stats(0)));
    es.onStep(step(2, [], { ...stats(0), perf: { flops: 1.5e9, readBytes: 4096, writeBytes: 512 } }));
    es.onStep(step(3, [], { ...stats(0), perf: { flops: 2e9, readBytes: 8192, writeBytes: 256 } }));
    expect(m.values('ts_estimated_flops_total')).to.deep.equal([0, 1.5e9, 2e9]);
    expect(m.values('ts_estimated_read_bytes_total')).to.deep.equal([0, 4096, 8192]);
    expect(m.values('ts_estimated_write_bytes_total')).to.deep.equal([0, 512, 256]);
  });

  it('should pre-create finished_reason="repetition" at 0 beside the four reasons the engine gives', () => {
    const m = new FakeMetrics(profileByKey());
    bindEngineSeries(m, 'tiny', '0', CACHE);
    expect(
      ['stop', 'length', 'abort', 'error', 'repetition'].map((r) =>
        m.values(`vllm:request_success_total{finished_reason=${r}}`),
      ),
    ).to.deep.equal([[0], [0], [0], [0], [0]]);
    expect(m.values('vllm:estimated_flops_per_gpu_total')).to.deep.equal([0]);
    expect(m.values('vllm:corrupted_requests_total')).to.deep.equal([]);
  });
});
