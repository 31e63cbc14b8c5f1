import { expect } from 'chai';
import type { GenSchedulerStats } from '../../../schema/engine-ipc.js';
import { CachingWindow } from '../../../frontend/generation/caching-window.js';
import { LoggingStatLogger } from '../../../frontend/generation/logging-stat-logger.js';

function stats(s: Partial<GenSchedulerStats>): GenSchedulerStats {
  return {
    numRunning: 0,
    numWaiting: 0,
    kvCacheUsage: 0,
    prefixCacheQueries: 0,
    prefixCacheHits: 0,
    numPreemptions: 0,
    numSteps: 1,
    ...s,
  };
}

describe('LoggingStatLogger', () => {
  it('should render the exact line with interval throughputs, gauges and the hit rate', () => {
    let now = 0;
    const l = new LoggingStatLogger(0, () => now);
    l.recordStep(120, 1, 2);
    l.recordStep(0, 49, 0);
    l.recordStats(
      stats({ numRunning: 2, numWaiting: 14, kvCacheUsage: 0.765, prefixCacheQueries: 100, prefixCacheHits: 92 }),
    );
    now = 10_000;
    expect(l.log()).to.deep.equal({
      level: 'info',
      line: 'Engine 000: Avg prompt throughput: 12.0 tokens/s, Avg generation throughput: 5.0 tokens/s, Running: 2 reqs, Waiting: 14 reqs, KV cache usage: 76.5%, Prefix cache hit rate: 92.0%',
    });
  });

  it("should end the line with the interval's corrupted requests only when the engine scans for NaN (vLLM's Corrupted: N reqs)", () => {
    let now = 0;
    const on = new LoggingStatLogger(0, () => now, true);
    const off = new LoggingStatLogger(1, () => now);
    for (const l of [on, off]) {
      l.recordStep(0, 4, 0);
      l.recordCorrupted();
      l.recordCorrupted();
    }
    now = 2000;
    const tail = 'Running: 0 reqs, Waiting: 0 reqs, KV cache usage: 0.0%, Prefix cache hit rate: 0.0%';
    expect([on.log().line, off.log().line]).to.deep.equal([
      `Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.0 tokens/s, ${tail}, Corrupted: 2 reqs`,
      `Engine 001: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.0 tokens/s, ${tail}`,
    ]);
    // A new interval starts at 0 (shown, as vLLM shows it, even at 0).
    now = 4000;
    expect(on.log().line.endsWith('Prefix cache hit rate: 0.0%, Corrupted: 0 reqs')).to.equal(true);
  });

  it("should add vLLM's MFU line after the stat line for an interval whose stats carried an estimate, and none otherwise", () => {
    let now = 0;
    const l = new LoggingStatLogger(0, () => now);
    l.recordStep(0, 4, 0);
    l.recordStats(stats({ perf: { flops: 3e12, readBytes: 5e9, writeBytes: 1e9 } }));
    l.recordStats(stats({ perf: { flops: 1e12, readBytes: 1e9, writeBytes: 1e9 } }));
    now = 2000;
    const lines = l.logLines();
    expect(lines.map((x) => x.line.slice(0, 12))).to.deep.equal(['Engine 000: ', 'Engine 000: ']);
    // (3 + 1) TFLOP and (5 + 1 + 1 + 1) GB over 2 s.
    expect(lines[1]).to.deep.equal({ level: 'info', line: 'Engine 000: MFU: 2.0 TF/s/GPU 4.0 GB/s/GPU' });
    now = 4000;
    expect(l.logLines().length).to.equal(1);
  });

  it('should show Preemptions only in an interval that had some', () => {
    let now = 0;
    const l = new LoggingStatLogger(3, () => now);
    l.recordStep(0, 4, 0);
    l.recordStats(stats({ numRunning: 1, numPreemptions: 2 }));
    now = 2000;
    expect(l.log().line).to.equal(
      'Engine 003: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, Preemptions: 2, KV cache usage: 0.0%, Prefix cache hit rate: 0.0%',
    );
    l.recordStep(0, 4, 0);
    now = 4000;
    expect(l.log().line).to.equal(
      'Engine 003: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 1 reqs, Waiting: 0 reqs, KV cache usage: 0.0%, Prefix cache hit rate: 0.0%',
    );
  });

  it('should demote to debug only after two consecutive idle intervals', () => {
    let now = 0;
    const l = new LoggingStatLogger(0, () => now);
    l.recordStep(10, 10, 1);
    now = 1000;
    expect(l.log().level).to.equal('info');
    now = 2000;
    expect(l.log().level).to.equal('info'); // first idle interval after activity
    now = 3000;
    expect(l.log().level).to.equal('debug');
    l.recordStep(0, 1, 0);
    now = 4000;
    expect(l.log().level).to.equal('info');
  });
});

describe('CachingWindow', () => {
  it('should follow vLLM CachingMetrics over a window of requests', () => {
    const w = new CachingWindow(5);
    w.observe(1, 20, 9);
    expect(w.hitRate).to.equal(0.45);
    w.observe(4, 80, 16);
    expect(w.hitRate).to.equal(0.25);
    w.observe(1, 10, 2);
    expect(w.hitRate).to.equal(0.2);
    w.observe(0, 0, 0);
    expect(w.hitRate).to.equal(0.2);
  });

  it('should hold lookups whose requests never report a first output in the next batch, not a batch each (aborted prefills grew the list without bound)', () => {
    const w = new CachingWindow(5);
    for (let i = 0; i < 100000; i++) w.observe(0, 100, 0);
    expect([w.size, w.hitRate]).to.deep.equal([0, 0]);
    w.observe(1, 10, 10);
    expect([w.size, w.hitRate]).to.deep.equal([1, 10 / (100000 * 100 + 10)]);
    // Five more requests push the batch that holds those lookups out of the window.
    for (let i = 0; i < 5; i++) w.observe(1, 10, 10);
    expect([w.size, w.hitRate]).to.deep.equal([5, 1]);
  });

  it('should keep a single batch larger than the window alone', () => {
    const w = new CachingWindow(10);
    w.observe(11, 20, 10);
    expect(w.hitRate).to.equal(0.5);
    w.observe(22, 40, 30);
    expect(w.hitRate).to.equal(0.75);
  });
});
