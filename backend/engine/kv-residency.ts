/**
 * KV block residency, sampled (vLLM's KVCacheMetricsCollector): a block is sampled when it is
 * allocated, with probability `sampleRate`; each prefix-cache hit on it is an access (the last 4
 * are kept, so at most 3 reuse gaps); when the block is taken from the free queue again (its
 * eviction: the cached K/V it held is overwritten) one event with its lifetime, idle time and
 * reuse gaps is queued. The engine drains the queue into its next scheduler stats; the frontend
 * observes the histograms. Times are the engine's monotonic clock (ms).
 */
import type { KvEvictionEvent } from '../../schema/engine-ipc.js';

/** Accesses kept per block (vLLM's ring of 4). */
const HISTORY = 4;

/** Events queued between two stats records at most; later ones are dropped and counted. */
export const MAX_PENDING_EVICTIONS = 65536;

interface BlockState {
  readonly birth: number;
  last: number;
  /** The last HISTORY access times, oldest first. */
  readonly accesses: number[];
}

/** Tracks sampled blocks of one pool and queues their eviction events. */
export class KvResidency {
  private readonly blocks = new Map<number, BlockState>();
  private pending: KvEvictionEvent[] = [];
  private droppedCount = 0;
  private reportedDropped = 0;

  /** `sampleRate` in (0, 1]; `random` and `now` are injectable for tests. */
  constructor(
    readonly sampleRate: number,
    private readonly now: () => number,
    private readonly random: () => number = Math.random,
  ) {}

  /** A block left the free queue for a sequence: maybe start tracking it. */
  onAllocated(block: number): void {
    if (this.random() < this.sampleRate) {
      const t = this.now();
      this.blocks.set(block, { birth: t, last: t, accesses: [] });
    }
  }

  /** A prefix-cache hit touched the block. */
  onAccessed(block: number): void {
    const s = this.blocks.get(block);
    if (s === undefined) return;
    const t = this.now();
    s.last = t;
    s.accesses.push(t);
    if (s.accesses.length > HISTORY) s.accesses.shift();
  }

  /** The block is being reused: if it was sampled, queue its event and stop tracking it. */
  onEvicted(block: number): void {
    const s = this.blocks.get(block);
    if (s === undefined) return;
    this.blocks.delete(block);
    if (this.pending.length >= MAX_PENDING_EVICTIONS) {
      this.droppedCount++;
      return;
    }
    const t = this.now();
    const gaps: number[] = [];
    for (let i = 1; i < s.accesses.length; i++) gaps.push(s.accesses[i]! - s.accesses[i - 1]!);
    this.pending.push({ lifetimeMs: t - s.birth, idleMs: t - s.last, reuseGapsMs: gaps });
  }

  /** The queued events, once (the queue starts empty again). */
  drain(): readonly KvEvictionEvent[] {
    const out = this.pending;
    if (out.length > 0) this.pending = [];
    return out;
  }

  /** Events dropped because the queue was full, since start. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Events dropped since the previous call (what the next stats record reports). */
  takeDropped(): number {
    const n = this.droppedCount - this.reportedDropped;
    this.reportedDropped = this.droppedCount;
    return n;
  }
}
