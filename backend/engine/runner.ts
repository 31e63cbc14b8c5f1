/**
 * What the engine core asks of a model runner: compute K/V for some tokens of some sequences
 * and return last-position logits. The runner owns the physical K/V (packed rows, KvStore);
 * the engine owns allocation (block tables) and decides what runs.
 */
import type { ModelSpec } from './config.js';

/** One sequence's work in a step. */
export interface RunItem {
  /** Stable id of the sequence (its packed row is keyed by it). */
  readonly seqId: number;
  /** All tokens of the sequence so far; this step computes `[start, start + count)`. */
  readonly tokens: readonly number[];
  readonly start: number;
  readonly count: number;
  /**
   * Block table covering positions `[0, start + count)`. When the runner has no row for the
   * sequence and `start > 0`, positions `[0, start)` are read from these blocks (prefix hit).
   */
  readonly blockTable: readonly number[];
  /** Whether the logits after the last computed token are needed (the step samples). */
  readonly wantLogits: boolean;
  /** The most positions this sequence can reach (prompt + max_tokens, capped): a sizing hint. */
  readonly reserve: number;
}

/** A model runner for one KV layout. */
export interface ModelRunner {
  readonly spec: ModelSpec;
  /** Runs one step; returns per item its logits (vocab-sized, caller-owned) or null. */
  run(items: readonly RunItem[]): Promise<(Float32Array | null)[]>;
  /** Drops a sequence's row (finished, aborted or preempted); its blocks stay in the pool. */
  release(seqId: number): void;
  /** Time spent inside `session.run` since the last call (ms), for the JS-overhead bench. */
  takeSessionMs(): number;
  close(): Promise<void>;
}
