/**
 * Scheduler stats with throttling that loses nothing: counters accumulate as deltas until a
 * stats record is sent; gauges are read fresh when it is.
 */
import type { GenSchedulerStats, KvEvictionEvent } from '../../schema/engine-ipc.js';
import type { StepCost } from './model-cost.js';

/** Live gauges read when a stats record is built. */
export interface StatsGauges {
  readonly numRunning: number;
  readonly numWaiting: number;
  readonly kvCacheUsage: number;
}

/** The sampled KV evictions since the previous stats, and how many did not fit their bounded queue. */
export interface EvictionsTaken {
  readonly events: readonly KvEvictionEvent[];
  readonly dropped: number;
}

/** Accumulates counter deltas and hands them out at most once per interval. */
export class StatsThrottle {
  private queries = 0;
  private hits = 0;
  private preemptions = 0;
  private steps = 0;
  private flushes = 0;
  /** The MFU estimate since the last stats (only an engine with enableMfuMetrics adds to it). */
  private flops = 0;
  private readBytes = 0;
  private writeBytes = 0;
  private lastSent = -Infinity;

  constructor(private readonly intervalMs: number) {}

  /** Adds one step's counter deltas. */
  add(queries: number, hits: number, preemptions: number): void {
    this.queries += queries;
    this.hits += hits;
    this.preemptions += preemptions;
    this.steps++;
  }

  /** Adds one step's estimated cost (backend/engine/model-cost.ts). */
  addCost(c: StepCost): void {
    this.flops += c.flops;
    this.readBytes += c.readBytes;
    this.writeBytes += c.writeBytes;
  }

  /** Adds a finished sequence's detokenizer bound hits. */
  addFlushes(n: number): void {
    this.flushes += n;
  }

  /**
   * A stats record when due (or forced, e.g. when the engine goes idle), resetting the deltas;
   * `evictions` drains the sampled KV evictions into it (only when due, so none is lost).
   */
  take(
    now: number,
    gauges: StatsGauges,
    force: boolean,
    evictions?: () => EvictionsTaken,
  ): GenSchedulerStats | undefined {
    if (!force && this.intervalMs > 0 && now - this.lastSent < this.intervalMs) return undefined;
    this.lastSent = now;
    const taken = evictions?.();
    const ev = taken?.events;
    const lost = taken?.dropped ?? 0;
    const s: GenSchedulerStats = {
      numRunning: gauges.numRunning,
      numWaiting: gauges.numWaiting,
      kvCacheUsage: gauges.kvCacheUsage,
      prefixCacheQueries: this.queries,
      prefixCacheHits: this.hits,
      numPreemptions: this.preemptions,
      numSteps: this.steps,
      ...(ev !== undefined && ev.length > 0 ? { kvEvictions: ev } : {}),
      ...(lost > 0 ? { kvEvictionsDropped: lost } : {}),
      ...(this.flushes > 0 ? { detokenizerFlushes: this.flushes } : {}),
      ...(this.readBytes > 0
        ? { perf: { flops: this.flops, readBytes: this.readBytes, writeBytes: this.writeBytes } }
        : {}),
    };
    this.queries = this.hits = this.preemptions = this.steps = this.flushes = 0;
    this.flops = this.readBytes = this.writeBytes = 0;
    return s;
  }
}
