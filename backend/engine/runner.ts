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
  /**
   * With `wantLogits`, logits after each of the last this many computed tokens, in order,
   * `numLogits × vocab` floats (default 1). A speculative verify asks for all its positions;
   * only a runner with `multiLogits` is given more than 1.
   */
  readonly numLogits?: number;
  /** The most positions this sequence can reach (prompt + max_tokens, capped): a sizing hint. */
  readonly reserve: number;
  /**
   * Positions of working row the KV budget has given this sequence (≥ start + count): the runner
   * keeps its row at exactly this capacity, so the rows never outgrow the budget.
   */
  readonly rowCapacity: number;
}

/**
 * One item's result: its logits (vocab-sized) when `wantLogits`, null when not, or the Error of
 * the model run that carried it (that run's items only; the others of the step go on).
 */
export type RunResult = Float32Array | null | Error;

/**
 * A model runner for one KV layout. Items run in plan order as far as their K/V depends on each
 * other: an item that adopts blocks another item of the same step fills (prefix sharing within a
 * step) reads them only after that item's run.
 */
export interface ModelRunner {
  readonly spec: ModelSpec;
  /** True when an item may ask for `numLogits` > 1 (the graph returns logits for several positions). */
  readonly multiLogits?: boolean;
  /** Runs one step; returns per item its logits (caller-owned), null, or the failure of its run. */
  run(items: readonly RunItem[]): Promise<RunResult[]>;
  /** Drops a sequence's row (finished, aborted or preempted); its blocks stay in the pool. */
  release(seqId: number): void;
  /** Time spent inside `session.run` since the last call (ms), for the JS-overhead bench. */
  takeSessionMs(): number;
  close(): Promise<void>;
}
