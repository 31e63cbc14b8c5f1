/**
 * The built-in onnx handler's tensor plumbing: requests whose tensors stack (same names, types
 * and row shapes, but for an input's padded axis) are grouped; each group's rows are copied
 * into one tensor per input along a new first axis, padded to the group's longest where the
 * model-config says so; each output is cut back into the group's rows. All of it on bytes, so
 * one path serves every element type.
 */
import type { OrtAnyData, OrtAnyTensor } from '../onnx/ort.js';
import type { PadRule, RequestTensors, TensorDType, TensorHead } from '../../schema/tensors.js';

import { DTYPE_BYTES, elementsOf, numberToHalf } from '../../schema/tensors.js';

/** A zeroed typed array of `n` elements of `dtype` (float16 as its bits, bool as bytes). */
export function allocTensor(dtype: TensorDType, n: number): OrtAnyData {
  switch (dtype) {
    case 'bool':
    case 'uint8':
      return new Uint8Array(n);
    case 'int8':
      return new Int8Array(n);
    case 'uint16':
    case 'float16':
      return new Uint16Array(n);
    case 'int16':
      return new Int16Array(n);
    case 'uint32':
      return new Uint32Array(n);
    case 'int32':
      return new Int32Array(n);
    case 'uint64':
      return new BigUint64Array(n);
    case 'int64':
      return new BigInt64Array(n);
    case 'float32':
      return new Float32Array(n);
    case 'float64':
      return new Float64Array(n);
  }
}

/** Fills `t` with a padding value written as its element type holds it. */
function fillPad(t: OrtAnyData, dtype: TensorDType, value: number): void {
  if (value === 0) return;
  if (t instanceof BigInt64Array || t instanceof BigUint64Array) t.fill(BigInt(Math.trunc(value)));
  else if (dtype === 'float16') (t as Uint16Array).fill(numberToHalf(value));
  else if (dtype === 'bool') (t as Uint8Array).fill(value !== 0 ? 1 : 0);
  else (t as Float32Array).fill(value);
}

/** The bytes of a typed array (a view, no copy). */
export function bytesOf(t: OrtAnyData): Uint8Array {
  return new Uint8Array(t.buffer, t.byteOffset, t.byteLength);
}

/**
 * Stacks input `j` of `rows` (all of one key) into a [rows, …] tensor; a padded axis takes the
 * longest row's size and the rule's value fills what shorter rows leave.
 */
export function stackInput(rows: readonly RequestTensors[], j: number, rule: PadRule | undefined): OrtAnyTensor {
  const head = rows[0]!.heads[j]!;
  const dims = [...head.dims];
  const a = rule === undefined ? -1 : rule.axis - 1;
  let padded = false;
  if (a >= 0 && a < dims.length) {
    for (const r of rows) {
      const d = r.heads[j]!.dims[a]!;
      if (d !== dims[a]) padded = true;
      if (d > dims[a]!) dims[a] = d;
    }
  }
  const rowElems = elementsOf(dims);
  const size = DTYPE_BYTES[head.dtype];
  const t = allocTensor(head.dtype, rowElems * rows.length);
  const dst = bytesOf(t);
  if (!padded) {
    rows.forEach((r, k) => dst.set(r.data[j]!, k * rowElems * size));
  } else {
    fillPad(t, head.dtype, rule!.value);
    // Row-major: each run of the padded axis and the axes after it is contiguous in both.
    const outer = elementsOf(dims.slice(0, a));
    const inner = elementsOf(dims.slice(a + 1)) * size;
    rows.forEach((r, k) => {
      const own = r.heads[j]!.dims[a]!;
      const src = r.data[j]!;
      for (let o = 0; o < outer; o++) {
        dst.set(src.subarray(o * own * inner, (o + 1) * own * inner), k * rowElems * size + o * dims[a]! * inner);
      }
    });
  }
  return { type: head.dtype, data: t, dims: [rows.length, ...dims] };
}

/** Row `k` of a [rows, …] output: its head (dims without the batch axis) and its bytes (a view). */
export function outputRow(name: string, t: OrtAnyTensor, k: number): { head: TensorHead; bytes: Uint8Array } {
  const rows = t.dims[0]!;
  const all = bytesOf(t.data);
  const rowBytes = all.byteLength / rows;
  return {
    head: { name, dtype: t.type, dims: t.dims.slice(1) },
    bytes: all.subarray(k * rowBytes, (k + 1) * rowBytes),
  };
}
