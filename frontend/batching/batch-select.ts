/**
 * Which queued jobs form the next batch when jobs carry a batch key (built-in onnx models): the
 * head's key decides, and only jobs of that key join it, in queue order, up to `batchSize` and
 * the batch's byte bound (the first job always fits: a request over the bound was refused at
 * decode). Jobs of other keys keep their places for a later batch.
 */
import type { Job } from './job.js';

/** The batch limits a selection honours. */
export interface SelectLimits {
  readonly batchSize: number;
  /** Bytes of input one batch holds at most. */
  readonly maxBatchBytes: number;
}

/** True when the head's key has a whole batch waiting (by count, or by the byte bound). */
export function keyedBatchReady(queue: readonly { readonly job: Job }[], limits: SelectLimits): boolean {
  const head = queue[0];
  if (head === undefined) return false;
  const key = head.job.batchKey;
  let n = 0;
  let bytes = 0;
  for (const s of queue) {
    if (s.job.batchKey !== key) continue;
    const b = s.job.inputBytes ?? 0;
    if (n > 0 && bytes + b > limits.maxBatchBytes) return true;
    bytes += b;
    if (++n >= limits.batchSize) return true;
  }
  return false;
}

/**
 * Splits `queue` into the next batch (the head's key; `drop` says which jobs to leave out
 * because their client is gone: they are returned in `dropped`) and the jobs that stay queued.
 */
export function selectKeyedBatch<S extends { readonly job: Job }>(
  queue: readonly S[],
  limits: SelectLimits,
  drop: (s: S) => boolean,
): { readonly batch: S[]; readonly rest: S[]; readonly dropped: S[] } {
  const batch: S[] = [];
  const rest: S[] = [];
  const dropped: S[] = [];
  const key = queue[0]?.job.batchKey;
  let bytes = 0;
  let closed = false;
  for (const s of queue) {
    if (closed || s.job.batchKey !== key) {
      rest.push(s);
      continue;
    }
    if (drop(s)) {
      dropped.push(s);
      continue;
    }
    const b = s.job.inputBytes ?? 0;
    if (batch.length > 0 && bytes + b > limits.maxBatchBytes) {
      closed = true;
      rest.push(s);
      continue;
    }
    bytes += b;
    batch.push(s);
    if (batch.length >= limits.batchSize) closed = true;
  }
  return { batch, rest, dropped };
}
