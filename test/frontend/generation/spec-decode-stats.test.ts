import { expect } from 'chai';
import type { EngineCoreOutputs, GenSchedulerStats, SpecDecodingStats } from '../../../schema/engine-ipc.js';
import { bindEngineSeries } from '../../../frontend/generation/engine-series.js';
import { EngineStats } from '../../../frontend/generation/engine-stats.js';
import { LoggingStatLogger } from '../../../frontend/generation/logging-stat-logger.js';
import { decodeFromGenWorkerMessage } from '../../../schema/engine-ipc.js';
import { FakeMetrics } from './fake-metrics.js';

const CACHE = { blockSize: 16, numBlocks: 64, enablePrefixCaching: true };

function stats(spec?: SpecDecodingStats): GenSchedulerStats {
  const s = {
    numRunning: 1,
    numWaiting: 0,
    kvCacheUsage: 0,
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    numPreemptions: 0,
    numSteps: 1,
  };
  return spec === undefined ? s : { ...s, specDecoding: spec };
}

function step(st: GenSchedulerStats): EngineCoreOutputs {
  return { timestamp: 1, outputs: [], numPromptTokens: 0, numGenerationTokens: 0, stats: st };
}

describe('spec decode counters in EngineStats', () => {
  it('should create no spec series on an engine that does not speculate', () => {
    const m = new FakeMetrics();
    const s = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => 0);
    s.onStep(step(stats()));
    expect(m.values('ts_spec_decode_num_drafts_total')).to.deep.equal([]);
    expect(m.values('ts_spec_decode_num_accepted_tokens_per_pos_total{position=0}')).to.deep.equal([]);
  });

  it("should add each stats record's deltas, per position too, creating the series at the first (zero) record", () => {
    const m = new FakeMetrics();
    const s = new EngineStats(bindEngineSeries(m, 'tiny', '0', CACHE), () => 0);
    s.onStep(
      step(stats({ numDrafts: 0, numDraftTokens: 0, numAcceptedTokens: 0, numAcceptedTokensPerPos: [0, 0, 0] })),
    );
    s.onStep(
      step(stats({ numDrafts: 2, numDraftTokens: 6, numAcceptedTokens: 4, numAcceptedTokensPerPos: [2, 1, 1] })),
    );
    expect(m.values('ts_spec_decode_num_drafts_total')).to.deep.equal([0, 2]);
    expect(m.values('ts_spec_decode_num_draft_tokens_total')).to.deep.equal([0, 6]);
    expect(m.values('ts_spec_decode_num_accepted_tokens_total')).to.deep.equal([0, 4]);
    expect(m.values('ts_spec_decode_num_accepted_tokens_per_pos_total{position=0}')).to.deep.equal([0, 2]);
    expect(m.values('ts_spec_decode_num_accepted_tokens_per_pos_total{position=2}')).to.deep.equal([0, 1]);
  });

  it('should carry specDecoding over IPC and refuse a malformed one', () => {
    const base = {
      type: 'tsserve.gen.step',
      engine: 0,
      timestamp: 1,
      outputs: [],
      numPromptTokens: 0,
      numGenerationTokens: 0,
    };
    const ok = stats({ numDrafts: 1, numDraftTokens: 3, numAcceptedTokens: 2, numAcceptedTokensPerPos: [1, 1, 0] });
    expect(decodeFromGenWorkerMessage({ ...base, stats: ok })).to.deep.equal({ ok: true, msg: { ...base, stats: ok } });
    expect(
      decodeFromGenWorkerMessage({
        ...base,
        stats: {
          ...ok,
          specDecoding: { numDrafts: 1.5, numDraftTokens: 3, numAcceptedTokens: 2, numAcceptedTokensPerPos: [1] },
        },
      }),
    ).to.deep.equal({
      ok: false,
      problems: [
        'stats.specDecoding: must hold integer counts numDrafts, numDraftTokens, numAcceptedTokens and a list numAcceptedTokensPerPos',
      ],
    });
  });
});

describe('LoggingStatLogger SpecDecoding line', () => {
  it("should print vLLM's SpecDecoding line after the stat line for an interval with drafts", () => {
    let now = 0;
    const l = new LoggingStatLogger(0, () => now);
    l.recordStep(0, 30, 0);
    l.recordStats(
      stats({ numDrafts: 8, numDraftTokens: 24, numAcceptedTokens: 14, numAcceptedTokensPerPos: [7, 5, 2] }),
    );
    l.recordStats(stats({ numDrafts: 2, numDraftTokens: 6, numAcceptedTokens: 1, numAcceptedTokensPerPos: [1, 0, 0] }));
    now = 10_000;
    expect(l.logLines()).to.deep.equal([
      {
        level: 'info',
        line: 'Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 3.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, KV cache usage: 0.0%, Prefix cache hit rate: 0.0%',
      },
      {
        level: 'info',
        line:
          'Engine 000: SpecDecoding metrics: Mean acceptance length: 2.50, Accepted throughput: 1.50 tokens/s, Drafted throughput: 3.00 tokens/s, ' +
          'Accepted: 15 tokens, Drafted: 30 tokens, Per-position acceptance rate: 0.800, 0.500, 0.200, Avg Draft acceptance rate: 50.0%',
      },
    ]);
  });

  it('should skip the line for an interval without drafts, and start each interval afresh', () => {
    let now = 0;
    const l = new LoggingStatLogger(1, () => now);
    l.recordStep(0, 10, 0);
    l.recordStats(stats({ numDrafts: 0, numDraftTokens: 0, numAcceptedTokens: 0, numAcceptedTokensPerPos: [0, 0] }));
    now = 1000;
    expect(l.logLines().map((x) => x.line.slice(0, 32))).to.deep.equal(['Engine 001: Avg prompt throughpu']);
    l.recordStats(stats({ numDrafts: 1, numDraftTokens: 2, numAcceptedTokens: 0, numAcceptedTokensPerPos: [0, 0] }));
    now = 2000;
    expect(l.logLines()[1]!.line).to.equal(
      'Engine 001: SpecDecoding metrics: Mean acceptance length: 1.00, Accepted throughput: 0.00 tokens/s, Drafted throughput: 2.00 tokens/s, ' +
        'Accepted: 0 tokens, Drafted: 2 tokens, Per-position acceptance rate: 0.000, 0.000, Avg Draft acceptance rate: 0.0%',
    );
  });
});
