/**
 * A batch's decoded input tensors copied into one buffer, so they cross to the worker as one
 * block of bytes (schema/worker-protocol.ts `BatchTensors`) rather than one structured-clone
 * record per tensor.
 */
import type { BatchTensors } from '../../schema/worker-protocol.js';
import type { TensorHead } from '../../schema/tensors.js';
import type { Job } from './job.js';

/** True when two head lists name the same tensors (names, types, dims). */
function sameHeads(a: readonly TensorHead[], b: readonly TensorHead[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.name !== y.name || x.dtype !== y.dtype || x.dims.length !== y.dims.length) return false;
    for (let d = 0; d < x.dims.length; d++) if (x.dims[d] !== y.dims[d]) return false;
  }
  return true;
}

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
  const kinds: (readonly TensorHead[])[] = [];
  const kindOf = new Int32Array(jobs.length);
  let at = 0;
  let k = 0;
  jobs.forEach((j, i) => {
    const input = j.input;
    if (input === undefined) {
      kindOf[i] = -1;
      return;
    }
    // At most one kind per job: a batch is one key, so mostly one kind (or one per padded size).
    let kind = kinds.findIndex((h) => sameHeads(h, input.heads));
    if (kind < 0) kind = kinds.push(input.heads) - 1;
    kindOf[i] = kind;
    for (const d of input.data) {
      data.set(d, at);
      at += d.byteLength;
      offsets[++k] = at;
    }
  });
  return { kinds, kindOf, data, offsets };
}
