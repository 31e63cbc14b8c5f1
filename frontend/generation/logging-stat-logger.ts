/**
 * The periodic log line of one engine (vLLM's LoggingStatLogger): throughputs are averages
 * over the time since the previous line, on the frontend's monotonic clock; the prompt
 * throughput counts prompt minus prefix-cache hits, once per sequence at its first output (a
 * recompute after a preemption is not counted again), as vLLM does.
 * After two consecutive idle intervals the line is demoted to debug. A speculating engine adds
 * vLLM's SpecDecodingLogging line for intervals that had drafts. An engine that scans its logits
 * for NaN (VLLM_COMPUTE_NANS_IN_LOGITS=1) ends the line with the interval's corrupted requests;
 * one with `--enable-mfu-metrics` adds vLLM's MFU line for intervals whose stats carried an
 * estimate: TF/s of estimated FLOPs and GB/s of estimated bytes read and written.
 */
import type { GenSchedulerStats } from '../../schema/engine-ipc.js';
import { CachingWindow } from './caching-window.js';

/** One rendered line and the level to print it at. */
export interface StatLine {
  readonly level: 'info' | 'debug';
  readonly line: string;
}

/** Accumulates one engine's interval and renders its line. */
export class LoggingStatLogger {
  private promptTokens = 0;
  private generationTokens = 0;
  private preemptions = 0;
  private newRequests = 0;
  private last: GenSchedulerStats | null = null;
  private lastLogMs: number;
  private lastPromptThroughput = 0;
  private lastGenerationThroughput = 0;
  private readonly caching = new CachingWindow(1000);
  private readonly prefix: string;
  private specDrafts = 0;
  private specDraftTokens = 0;
  private specAccepted = 0;
  private specPerPos: number[] = [];
  private corrupted = 0;
  /** The MFU estimate of the interval (stats.perf, only from an engine with enableMfuMetrics). */
  private flops = 0;
  private bytes = 0;
  private hadPerf = false;

  /** `nowMs` is a monotonic clock in ms (performance.now in production, a fake in tests). */
  constructor(
    engineIndex: number,
    private readonly nowMs: () => number,
    /** The engine scans its logits for NaN: the line shows `Corrupted: N reqs` (vLLM's, with VLLM_COMPUTE_NANS_IN_LOGITS). */
    private readonly showCorrupted = false,
  ) {
    this.prefix = `Engine ${String(engineIndex).padStart(3, '0')}: `;
    this.lastLogMs = nowMs();
  }

  /** One step's token counts: prompt minus cached tokens of first outputs, and sampled tokens. */
  recordStep(computedPromptTokens: number, generationTokens: number, firstOutputs: number): void {
    this.promptTokens += computedPromptTokens;
    this.generationTokens += generationTokens;
    this.newRequests += firstOutputs;
  }

  /** A finished sequence whose logits held a NaN. */
  recordCorrupted(): void {
    this.corrupted++;
  }

  /** One scheduler-stats record (gauges kept, deltas accumulated). */
  recordStats(stats: GenSchedulerStats): void {
    this.last = stats;
    this.preemptions += stats.numPreemptions;
    const sd = stats.specDecoding;
    if (sd !== undefined) {
      this.specDrafts += sd.numDrafts;
      this.specDraftTokens += sd.numDraftTokens;
      this.specAccepted += sd.numAcceptedTokens;
      sd.numAcceptedTokensPerPos.forEach((n, i) => (this.specPerPos[i] = (this.specPerPos[i] ?? 0) + n));
    }
    const pf = stats.perf;
    if (pf !== undefined) {
      this.hadPerf = true;
      this.flops += pf.flops;
      this.bytes += pf.readBytes + pf.writeBytes;
    }
    this.caching.observe(this.newRequests, stats.prefixCacheQueries, stats.prefixCacheHits);
    this.newRequests = 0;
  }

  /**
   * The interval's lines (the stat line, then the SpecDecoding line when there were drafts, then
   * the MFU line when the stats carried an estimate) and starts a new interval.
   */
  logLines(): StatLine[] {
    const elapsedS = (this.nowMs() - this.lastLogMs) / 1000;
    const main = this.log();
    const lines = [main];
    if (this.specDrafts > 0) {
      lines.push({ level: main.level, line: this.prefix + this.specLine(elapsedS) });
      this.specDrafts = this.specDraftTokens = this.specAccepted = 0;
      this.specPerPos = [];
    }
    if (this.hadPerf) {
      // vLLM's PerfMetricsLogging line; "per GPU" is per engine process here (one CPU device).
      const perS = (n: number, unit: number): string => (elapsedS > 0 ? n / elapsedS / unit : 0).toFixed(1);
      lines.push({
        level: main.level,
        line: `${this.prefix}MFU: ${perS(this.flops, 1e12)} TF/s/GPU ${perS(this.bytes, 1e9)} GB/s/GPU`,
      });
      this.flops = this.bytes = 0;
      this.hadPerf = false;
    }
    return lines;
  }

  /**
   * vLLM's SpecDecodingLogging line: mean acceptance length 1 + accepted / drafts (the bonus
   * token counted), throughputs over the interval, per-position rate = accepted at position i /
   * drafts, average rate = accepted / drafted tokens.
   */
  private specLine(elapsedS: number): string {
    const perS = (n: number): string => (elapsedS > 0 ? n / elapsedS : 0).toFixed(2);
    const rates = this.specPerPos.map((n) => (n / this.specDrafts).toFixed(3)).join(', ');
    const rate = this.specDraftTokens > 0 ? ((this.specAccepted / this.specDraftTokens) * 100).toFixed(1) : 'nan';
    return (
      `SpecDecoding metrics: Mean acceptance length: ${(1 + this.specAccepted / this.specDrafts).toFixed(2)}, ` +
      `Accepted throughput: ${perS(this.specAccepted)} tokens/s, Drafted throughput: ${perS(this.specDraftTokens)} tokens/s, ` +
      `Accepted: ${this.specAccepted} tokens, Drafted: ${this.specDraftTokens} tokens, ` +
      `Per-position acceptance rate: ${rates}, Avg Draft acceptance rate: ${rate}%`
    );
  }

  /** Renders the interval's stat line and starts a new interval (the spec counters are `logLines`'). */
  log(): StatLine {
    const now = this.nowMs();
    const elapsedS = (now - this.lastLogMs) / 1000;
    const promptThroughput = elapsedS > 0 ? this.promptTokens / elapsedS : 0;
    const generationThroughput = elapsedS > 0 ? this.generationTokens / elapsedS : 0;
    const idle =
      promptThroughput === 0 &&
      generationThroughput === 0 &&
      this.lastPromptThroughput === 0 &&
      this.lastGenerationThroughput === 0;
    const s = this.last;
    const parts = [
      `Avg prompt throughput: ${promptThroughput.toFixed(1)} tokens/s`,
      `Avg generation throughput: ${generationThroughput.toFixed(1)} tokens/s`,
      `Running: ${s?.numRunning ?? 0} reqs`,
      `Waiting: ${s?.numWaiting ?? 0} reqs`,
    ];
    if (this.preemptions > 0) parts.push(`Preemptions: ${this.preemptions}`);
    parts.push(`KV cache usage: ${((s?.kvCacheUsage ?? 0) * 100).toFixed(1)}%`);
    parts.push(`Prefix cache hit rate: ${(this.caching.hitRate * 100).toFixed(1)}%`);
    if (this.showCorrupted) parts.push(`Corrupted: ${this.corrupted} reqs`);
    this.corrupted = 0;
    this.promptTokens = 0;
    this.generationTokens = 0;
    this.preemptions = 0;
    this.lastLogMs = now;
    this.lastPromptThroughput = promptThroughput;
    this.lastGenerationThroughput = generationThroughput;
    return { level: idle ? 'debug' : 'info', line: this.prefix + parts.join(', ') };
  }
}
