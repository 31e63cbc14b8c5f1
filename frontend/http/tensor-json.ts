/**
 * Tensors as nested JSON arrays, both ways: a request's nested arrays give a tensor's shape
 * (they must be rectangular) and its elements row major; an answer's tensors are written as
 * nested arrays of their shape, without building the JS arrays (64-bit integers exact, floats
 * as JSON.stringify writes them, a non-finite float as null).
 */
import type { TensorAnswer, TensorDType } from '../../schema/tensors.js';
import { DTYPE_BYTES, readElement } from '../../schema/tensors.js';

/** A nested array's shape and its elements row major, or the 400 of a ragged one. */
export function nestedTensor(name: string, v: unknown): { dims: number[]; values: unknown[] } | string {
  const dims: number[] = [];
  for (let x: unknown = v; Array.isArray(x); x = x[0]) dims.push(x.length);
  const values: unknown[] = [];
  const first = (depth: number): string => `[${Array.from({ length: depth }, () => '0').join('][')}]`;
  const walk = (x: unknown, depth: number, at: string): string | null => {
    if (depth === dims.length) {
      if (Array.isArray(x))
        return `input '${name}': not a rectangular array: ${at} is an array where ${first(depth)} is a value`;
      values.push(x);
      return null;
    }
    if (!Array.isArray(x) || x.length !== dims[depth])
      return `input '${name}': not a rectangular array: ${at} has ${Array.isArray(x) ? `${x.length} entries` : 'a value'} where ${first(depth)} has ${dims[depth]} entries`;
    for (let i = 0; i < x.length; i++) {
      const why = walk(x[i], depth + 1, `${at === 'the array' ? '' : at}[${i}]`);
      if (why !== null) return why;
    }
    return null;
  };
  const why = walk(v, 0, 'the array');
  return why ?? { dims, values };
}

/** One element as JSON text. */
function elementText(view: DataView, dtype: TensorDType, k: number): string {
  const v = readElement(view, dtype, k);
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  return String(v);
}

/**
 * `nestedText` of float32 elements on one or two axes (a batch's rows of scores, every light
 * model's answer): the same text, built in one pass without the general loop's parts array and
 * per-axis tests of every element; `n` > 0 elements, exactly as many as `dims` holds.
 */
function float32Rows(view: DataView, dims: readonly number[], n: number): string {
  const width = dims[dims.length - 1]!;
  let out = dims.length === 2 ? '[' : '';
  for (let k = 0; k < n; k++) {
    if (k % width === 0) out += k === 0 ? '[' : '],[';
    else out += ',';
    const v = view.getFloat32(k * 4, true);
    out += Number.isFinite(v) ? String(v) : 'null';
  }
  return out + (dims.length === 2 ? ']]' : ']');
}

/** A tensor's bytes as nested JSON arrays of `dims` (a flat array for one axis, a bare value for none). */
export function nestedText(dtype: TensorDType, dims: readonly number[], bytes: Uint8Array): string {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / DTYPE_BYTES[dtype];
  if (dims.length === 0) return n === 0 ? 'null' : elementText(view, dtype, 0);
  if (
    dtype === 'float32' &&
    n > 0 &&
    (dims.length === 1 ? dims[0] : dims.length === 2 ? dims[0]! * dims[1]! : -1) === n
  )
    return float32Rows(view, dims, n);
  const parts: string[] = [];
  // Strides of each axis in elements: a `[` opens where an index is a multiple of one.
  const strides: number[] = new Array<number>(dims.length);
  let s = 1;
  for (let a = dims.length - 1; a >= 0; a--) {
    strides[a] = s;
    s *= dims[a]!;
  }
  if (n === 0) return emptyText(dims);
  for (let k = 0; k < n; k++) {
    let open = '';
    for (let a = 0; a < dims.length; a++) if (k % (strides[a]! * dims[a]!) === 0) open += '[';
    let close = '';
    for (let a = dims.length - 1; a >= 0; a--) if ((k + 1) % (strides[a]! * dims[a]!) === 0) close += ']';
    parts.push(open + elementText(view, dtype, k) + close);
  }
  return parts.join(',');
}

/** Nested empty arrays of `dims` (one of them 0). */
function emptyText(dims: readonly number[]): string {
  if (dims.length === 0 || dims[0] === 0) return '[]';
  return `[${Array.from({ length: dims[0]! }, () => emptyText(dims.slice(1))).join(',')}]`;
}

/**
 * A built-in onnx model's answer on /predictions: a model with one output answers that output's
 * nested arrays (the demo mlp's row of 10 probabilities, as before); one with several answers
 * an object of them by name, in the graph's order.
 */
export function tensorAnswerText(a: TensorAnswer): string {
  if (a.outputs.length === 1) return nestedText(a.outputs[0]!.dtype, a.outputs[0]!.dims, a.data[0]!);
  return `{${a.outputs.map((o, i) => `${JSON.stringify(o.name)}:${nestedText(o.dtype, o.dims, a.data[i]!)}`).join(',')}}`;
}
