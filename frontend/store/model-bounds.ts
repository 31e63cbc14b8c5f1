/**
 * The bounds of a model's numeric settings, shared by both doors that set them (model-config.yaml
 * and the management API's query parameters) so they can never disagree.
 */

/** An inclusive integer range, with the unit the error message names. */
export interface IntBound {
  readonly min: number;
  readonly max: number;
  /** ' seconds', ' ms' or '' (appended to the range in messages). */
  readonly unit: string;
}

/**
 * Each bound keeps a timer-backed setting far below Node's setTimeout limit (2^31-1 ms, about
 * 24.8 days, beyond which a timer fires after 1 ms) and a count at a size a server can hold.
 */
export const MODEL_BOUNDS = Object.freeze({
  /** 100 × batchSize is the default queue bound; 1024 is 4× vLLM's default max_num_seqs. */
  batchSize: { min: 1, max: 1024, unit: '' },
  /** One minute: a request should not wait longer than that for company. */
  maxBatchDelay: { min: 0, max: 60_000, unit: ' ms' },
  /** One day (TorchServe's default is 120 s); ×1000 stays below 2^31-1 ms. */
  responseTimeout: { min: 1, max: 86_400, unit: ' seconds' },
  /** Per model; the server-wide --max-workers bounds the sum as well. */
  minWorkers: { min: 0, max: 1024, unit: '' },
  maxWorkers: { min: 0, max: 1024, unit: '' },
  threads: { min: 1, max: 1024, unit: '' },
} satisfies Readonly<Record<string, IntBound>>);

/** `an integer from 1 to 86400 seconds`: what a value out of `b` is told it must be. */
export function boundText(b: IntBound): string {
  return `an integer from ${b.min} to ${b.max}${b.unit}`;
}
