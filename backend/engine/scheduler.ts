/**
 * The scheduler: waiting and running queues under maxNumSeqs and a per-step token budget.
 * Default (vLLM v0 style): a step with admissible waiting sequences runs only their whole
 * prefills; otherwise it decodes every running sequence. With chunked prefill (vLLM v1 style)
 * running sequences go first (decodes and prefill chunks) and waiting ones fill the rest of the
 * budget. When the pool runs dry the NEWEST running sequence is preempted: its blocks are freed
 * and it waits at the head of the queue to be recomputed.
 */
import type { EngineConfig } from './config.js';
import type { KvCacheManager, PrefixHit } from './kv-cache-manager.js';
import { NgramProposer } from './ngram-proposer.js';
import type { Sequence } from './sequence.js';

/** One sequence's share of a step: compute tokens `[start, start + count)`. */
export interface ScheduledItem {
  readonly seq: Sequence;
  readonly start: number;
  readonly count: number;
  /** Counted as prompt tokens (first prefill, its chunks, or a recompute after preemption). */
  readonly isPrefill: boolean;
  /**
   * Speculative drafts to verify (n-gram proposals): the item then computes the sequence's last
   * token and these, `count` = 1 + drafts.length positions, and wants logits at every one.
   */
  readonly drafts?: readonly number[];
}

/** The plan of one step. */
export interface SchedulerOutput {
  readonly items: readonly ScheduledItem[];
  /** Sequences preempted while planning; their runner rows must be dropped. */
  readonly preempted: readonly Sequence[];
}

/** Counters the scheduler accumulates between stats (token counts for the prefix cache). */
export interface SchedulerCounters {
  prefixQueries: number;
  prefixHits: number;
  preemptions: number;
}

/** Queues and the per-step planning. */
export class Scheduler {
  readonly waiting: Sequence[] = [];
  readonly running: Sequence[] = [];
  readonly counters: SchedulerCounters = { prefixQueries: 0, prefixHits: 0, preemptions: 0 };

  private readonly proposer: NgramProposer | null;

  constructor(
    private readonly cfg: EngineConfig,
    private readonly kv: KvCacheManager,
  ) {
    this.proposer = cfg.speculative === null ? null : new NgramProposer(cfg.speculative);
  }

  /** Queues a new sequence. */
  add(seq: Sequence): void {
    seq.status = 'waiting';
    this.waiting.push(seq);
  }

  /** Removes a sequence from whichever queue holds it and frees its blocks (finish or abort). */
  remove(seq: Sequence): void {
    removeFrom(this.running, seq);
    removeFrom(this.waiting, seq);
    this.kv.free(seq);
  }

  /** True while any sequence waits or runs. */
  hasWork(): boolean {
    return this.waiting.length > 0 || this.running.length > 0;
  }

  /** Plans one step; `now` stamps SCHEDULED and PREEMPTED events. */
  schedule(now: number): SchedulerOutput {
    const items: ScheduledItem[] = [];
    const preempted: Sequence[] = [];
    let budget = this.cfg.maxNumBatchedTokens;
    if (!this.cfg.enableChunkedPrefill) {
      budget = this.admit(now, budget, items);
      if (items.length > 0) return { items, preempted };
      this.scheduleRunning(now, budget, items, preempted);
      return { items, preempted };
    }
    budget = this.scheduleRunning(now, budget, items, preempted);
    // A step that had to preempt admits nobody: the pool is short.
    if (preempted.length === 0) this.admit(now, budget, items);
    return { items, preempted };
  }

  private scheduleRunning(now: number, budget: number, items: ScheduledItem[], preempted: Sequence[]): number {
    const chunk = this.cfg.enableChunkedPrefill ? this.cfg.prefillChunkSize : Infinity;
    for (let i = 0; i < this.running.length && budget > 0; i++) {
      const seq = this.running[i]!;
      const n = Math.min(seq.tokens.length - seq.numComputed, budget, chunk);
      const drafts = this.draftsFor(seq, n, budget);
      // Drafts are optional work: when their slots do not fit, the sequence decodes plainly
      // rather than preempting anyone for them.
      if (drafts.length > 0 && this.kv.allocate(seq, 1 + drafts.length)) {
        items.push({ seq, start: seq.numComputed, count: 1 + drafts.length, isPrefill: false, drafts });
        budget -= 1 + drafts.length;
        continue;
      }
      let self = false;
      while (!this.kv.allocate(seq, n)) {
        const victim = this.running.pop()!;
        this.preempt(victim, now);
        preempted.push(victim);
        if (victim === seq) {
          self = true;
          break;
        }
      }
      if (self) break;
      items.push({ seq, start: seq.numComputed, count: n, isPrefill: seq.inPrefill });
      budget -= n;
    }
    return budget;
  }

  /**
   * The n-gram drafts of a decoding sequence (one token to compute, not in prefill): at most
   * num_speculative_tokens, within the step budget, and never past max_tokens or maxModelLen
   * (the last emitted token is the bonus one).
   */
  private draftsFor(seq: Sequence, n: number, budget: number): readonly number[] {
    if (this.proposer === null || n !== 1 || seq.inPrefill) return NO_DRAFTS;
    const k = Math.min(
      this.cfg.speculative!.numSpeculativeTokens,
      budget - 1,
      seq.params.maxTokens - seq.numOutput - 1,
      this.cfg.maxModelLen - seq.tokens.length - 1,
    );
    return k > 0 ? this.proposer.propose(seq.tokens, k) : NO_DRAFTS;
  }

  private admit(now: number, budget: number, items: ScheduledItem[]): number {
    const chunked = this.cfg.enableChunkedPrefill;
    while (this.waiting.length > 0 && this.running.length < this.cfg.maxNumSeqs && budget > 0) {
      const seq = this.waiting[0]!;
      const hit: PrefixHit = this.kv.lookup(seq);
      const pending = seq.tokens.length - hit.numTokens;
      const n = chunked ? Math.min(pending, this.cfg.prefillChunkSize, budget) : pending;
      if (n > budget) break;
      if (!this.kv.allocate(seq, n, hit)) break;
      this.waiting.shift();
      seq.numComputed = hit.numTokens;
      seq.status = 'running';
      seq.inPrefill = true;
      this.running.push(seq);
      seq.events.push({ type: 'SCHEDULED', ts: now });
      if (seq.firstScheduledTs < 0) seq.firstScheduledTs = now;
      // Lookups after a preemption are recompute, not demand: vLLM keeps them out of the counters.
      if (seq.prefill === undefined) {
        const cached = Math.min(hit.numTokens, seq.promptLen);
        seq.prefill = {
          numPromptTokens: seq.promptLen,
          numCachedTokens: cached,
          numComputedTokens: seq.promptLen - cached,
          ...(hit.recomputed !== undefined && seq.tokens.length === seq.promptLen
            ? { numRecomputedTokens: hit.recomputed }
            : {}),
        };
        if (this.kv.enablePrefixCaching) {
          this.counters.prefixQueries += seq.tokens.length;
          this.counters.prefixHits += hit.numTokens;
        }
      }
      items.push({ seq, start: hit.numTokens, count: n, isPrefill: true });
      budget -= n;
    }
    return budget;
  }

  private preempt(seq: Sequence, now: number): void {
    this.kv.free(seq);
    seq.numComputed = 0;
    seq.status = 'waiting';
    seq.numPreemptions++;
    seq.events.push({ type: 'PREEMPTED', ts: now });
    this.waiting.unshift(seq);
    this.counters.preemptions++;
  }
}

const NO_DRAFTS: readonly number[] = Object.freeze([]);

/** Removes `seq` from `list` if there (no array built per call: this runs per finished sequence). */
function removeFrom(list: Sequence[], seq: Sequence): void {
  const i = list.indexOf(seq);
  if (i >= 0) list.splice(i, 1);
}
