/**
 * Tensors as both sides carry them for the built-in `onnx` handler: each one is a name, an
 * element type (onnxruntime's names), its dimensions and its elements as little-endian bytes.
 * The frontend decodes a request into these (checked against the graph's declared inputs); the
 * worker stacks them into the batch's tensors, and answers each request's rows of every output
 * the same way. Bytes rather than typed arrays: they cross the IPC channel at any offset, and
 * one representation serves every element type, 64-bit integers and float16 included.
 */

/** Element types the built-in handler feeds and reads (onnxruntime-node's names). */
export type TensorDType =
  | 'bool'
  | 'uint8'
  | 'int8'
  | 'uint16'
  | 'int16'
  | 'uint32'
  | 'int32'
  | 'uint64'
  | 'int64'
  | 'float16'
  | 'float32'
  | 'float64';

/** Bytes per element of each element type. */
export const DTYPE_BYTES: Readonly<Record<TensorDType, number>> = {
  bool: 1,
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint32: 4,
  int32: 4,
  uint64: 8,
  int64: 8,
  float16: 2,
  float32: 4,
  float64: 8,
};

/** The Open Inference Protocol's datatype of each element type. */
export const OIP_DATATYPE: Readonly<Record<TensorDType, string>> = {
  bool: 'BOOL',
  uint8: 'UINT8',
  int8: 'INT8',
  uint16: 'UINT16',
  int16: 'INT16',
  uint32: 'UINT32',
  int32: 'INT32',
  uint64: 'UINT64',
  int64: 'INT64',
  float16: 'FP16',
  float32: 'FP32',
  float64: 'FP64',
};

/** The element type of an Open Inference Protocol datatype, undefined for one with none here (BYTES, BF16). */
export function dtypeOfDatatype(datatype: string): TensorDType | undefined {
  for (const k in OIP_DATATYPE) if (OIP_DATATYPE[k as TensorDType] === datatype) return k as TensorDType;
  return undefined;
}

/** True for a name onnxruntime uses for one of the element types above. */
export function isTensorDType(s: string): s is TensorDType {
  return Object.hasOwn(DTYPE_BYTES, s);
}

/** A tensor's name, element type and dimensions. */
export interface TensorHead {
  readonly name: string;
  readonly dtype: TensorDType;
  readonly dims: readonly number[];
}

/**
 * One request's input tensors, decoded and checked by the frontend: `data[i]` holds the
 * elements of `heads[i]`. For a model batched along its first axis the dims leave that axis
 * out (one row); otherwise they are the whole tensor's.
 */
export interface RequestTensors {
  readonly heads: readonly TensorHead[];
  readonly data: readonly Uint8Array[];
}

/** The bytes a request's tensors hold. */
export function tensorBytes(t: RequestTensors): number {
  let n = 0;
  for (const d of t.data) n += d.byteLength;
  return n;
}

/** The element count of `dims` (1 for a scalar). */
export function elementsOf(dims: readonly number[]): number {
  let n = 1;
  for (const d of dims) n *= d;
  return n;
}

/** How requests whose input differs along one axis are batched together: padded to the batch's longest. */
export interface PadRule {
  /** The axis of the graph's input shape (1 or more: axis 0 is the batch). */
  readonly axis: number;
  /** The value written into the padding. */
  readonly value: number;
}

/** The `tensors:` block of a built-in `onnx` model's model-config.yaml. */
export interface TensorSettings {
  /** Per input name: its padding rule (inputs without one batch only with requests of their exact shape). */
  readonly pad?: Readonly<Record<string, PadRule>>;
  /** Bytes of input one batch holds at most (a request over it alone is refused with 400). */
  readonly maxBatchBytes?: number;
}

/**
 * The key two requests share when their tensors stack into one run: names, types and row
 * shapes, with a padded input's padded axis left out (`axis` counts the graph's axes; a row's
 * are one fewer). The frontend batches by it; the worker groups by it.
 */
export function stackKey(heads: readonly TensorHead[], pad: Readonly<Record<string, PadRule>>): string {
  return heads
    .map((h) => {
      const rowAxis = (pad[h.name]?.axis ?? 0) - 1;
      return `${h.name}:${h.dtype}:${h.dims.map((d, i) => (i === rowAxis ? '*' : String(d))).join('x')}`;
    })
    .join('|');
}

/** The batch's byte bound when model-config gives none: 64 MiB. */
export const DEFAULT_MAX_BATCH_BYTES = 64 * 1024 * 1024;

/** Marks a handler's answer made of tensors (the built-in onnx handler's), told apart from any JSON answer. */
export const TENSOR_ANSWER = 'tsserve.tensors';

/**
 * One request's answer from the built-in handler: every output of the graph, in its order, as
 * this request's rows (dims without the batch axis for a batched model, like the inputs').
 */
export interface TensorAnswer {
  readonly kind: typeof TENSOR_ANSWER;
  readonly outputs: readonly TensorHead[];
  readonly data: readonly Uint8Array[];
}

/** True when a handler's answer is a TensorAnswer. */
export function isTensorAnswer(v: unknown): v is TensorAnswer {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === TENSOR_ANSWER;
}

/** Plain values of a tensor's bytes (64-bit integers beyond 2^53 stay exact as bigint). */
export function valuesOf(dtype: TensorDType, bytes: Uint8Array): (number | bigint | boolean)[] {
  const n = bytes.byteLength / DTYPE_BYTES[dtype];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Array<number | bigint | boolean>(n);
  for (let k = 0; k < n; k++) out[k] = readElement(view, dtype, k);
  return out;
}

/** Element `k` of a little-endian view. */
export function readElement(view: DataView, dtype: TensorDType, k: number): number | bigint | boolean {
  switch (dtype) {
    case 'bool':
      return view.getUint8(k) !== 0;
    case 'uint8':
      return view.getUint8(k);
    case 'int8':
      return view.getInt8(k);
    case 'uint16':
      return view.getUint16(k * 2, true);
    case 'int16':
      return view.getInt16(k * 2, true);
    case 'uint32':
      return view.getUint32(k * 4, true);
    case 'int32':
      return view.getInt32(k * 4, true);
    case 'uint64': {
      const v = view.getBigUint64(k * 8, true);
      return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    case 'int64': {
      const v = view.getBigInt64(k * 8, true);
      return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(-Number.MAX_SAFE_INTEGER) ? Number(v) : v;
    }
    case 'float16':
      return halfToNumber(view.getUint16(k * 2, true));
    case 'float32':
      return view.getFloat32(k * 4, true);
    case 'float64':
      return view.getFloat64(k * 8, true);
  }
}

/** An IEEE 754 half's bits as a number. */
export function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** A number's nearest IEEE 754 half (round to nearest, ties to even, from the double itself), as its bits. */
export function numberToHalf(v: number): number {
  if (Number.isNaN(v)) return 0x7e00;
  const sign = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a === Infinity) return sign | 0x7c00;
  let e = a === 0 ? -14 : Math.floor(Math.log2(a));
  // log2 may round across a power of two: settle e so that 2^e <= a < 2^(e+1).
  if (a !== 0 && 2 ** e > a) e--;
  if (a !== 0 && 2 ** (e + 1) <= a) e++;
  // Below 2^-14 a half is subnormal: its step stays 2^-24.
  if (e < -14) e = -14;
  // Dividing by a power of two is exact, so the rounding below is the only one.
  const q = a / 2 ** (e - 10);
  let m = Math.floor(q);
  const rest = q - m;
  if (rest > 0.5 || (rest === 0.5 && (m & 1) === 1)) m++;
  if (m === 2048) {
    m = 1024;
    e++;
  }
  if (e > 15) return sign | 0x7c00;
  if (m < 1024) return sign | m;
  return sign | ((e + 15) << 10) | (m - 1024);
}
