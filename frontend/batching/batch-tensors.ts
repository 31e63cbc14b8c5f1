/**
 * A batch's decoded input tensors copied into one buffer, so they cross to the worker as one
 * block of bytes (schema/worker-protocol.ts `BatchTensors`) rather than one structured-clone
 * record per tensor.
 */
import type { BatchTensors } from '../../schema/worker-protocol.js';
import type { TensorHead } from '../../schema/tensors.js';
import type { Job } from './job.js';

/** The jobs' tensors in one buffer; undefined when no job has any. */
export function batchTensors(jobs: readonly Job[]): BatchTensors | undefined {
  let total = 0;
  let count = 0;
  for (const j of jobs) {
    if (j.input === undefined) continue;
    for (const d of j.input.data) total += d.byteLength;
    count += j.input.data.length;
  }
  if (count === 0) return undefined;
  const data = new Uint8Array(total);
  const offsets = new Uint32Array(count + 1);
  const heads: (readonly TensorHead[] | null)[] = [];
  let at = 0;
  let k = 0;
  for (const j of jobs) {
    heads.push(j.input?.heads ?? null);
    for (const d of j.input?.data ?? []) {
      data.set(d, at);
      at += d.byteLength;
      offsets[++k] = at;
    }
  }
  return { heads, data, offsets };
}
