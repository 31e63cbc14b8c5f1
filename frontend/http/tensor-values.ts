/**
 * A tensor's elements as the model's declared type holds them, little-endian: JSON values
 * (numbers, booleans for BOOL) written into bytes, or bytes a client sent checked. Each value
 * must be one the type holds exactly: an integer in range for an integer type (300 as INT8, 1.5
 * as INT32 would be cast by the runtime), finite for a float type (as /predictions always
 * refused `1e308` for float32), `true`/`false` for BOOL.
 */
import type { TensorDType } from '../../schema/tensors.js';
import { DTYPE_BYTES, halfToNumber, numberToHalf, OIP_DATATYPE } from '../../schema/tensors.js';
import { float32Message } from './json-tensor.js';

/** Integers a JS number holds exactly: the range of 64-bit values taken from JSON. */
const SAFE = Number.MAX_SAFE_INTEGER;

/** The values each integer type holds (64-bit ones: those a JSON number carries exactly). */
const RANGE: Readonly<Partial<Record<TensorDType, readonly [number, number]>>> = {
  uint8: [0, 255],
  int8: [-128, 127],
  uint16: [0, 65535],
  int16: [-32768, 32767],
  uint32: [0, 4294967295],
  int32: [-2147483648, 2147483647],
  uint64: [0, SAFE],
  int64: [-SAFE, SAFE],
};

/** How a value is shown in a message: its JSON text, bounded. */
function shown(v: unknown): string {
  const t = v === undefined ? 'nothing' : JSON.stringify(v);
  return t.length > 24 ? `${t.slice(0, 24)}…` : t;
}

/** The 400 of element `k` that `dtype` does not hold. */
function notHeld(name: string, dtype: TensorDType, k: number, v: unknown): string {
  const dt = OIP_DATATYPE[dtype];
  const range = RANGE[dtype];
  if (dtype === 'bool') return `input '${name}': element ${k} is ${shown(v)}, not true or false (BOOL)`;
  if (typeof v !== 'number') return `input '${name}': element ${k} is ${shown(v)}, not a number (${dt})`;
  if (range !== undefined)
    return `input '${name}': element ${k} (${shown(v)}) is not ${dt.startsWith('I') ? 'an' : 'a'} ${dt}${dt.endsWith('64') ? ' a JSON number carries exactly' : ''} (an integer from ${range[0]} to ${range[1]})`;
  if (dtype === 'float32') return `input '${name}': ${float32Message(k, shown(v))}`;
  return `input '${name}': element ${k} (${shown(v)}) is not finite in ${dt}`;
}

/** JSON values (flat, row major) as `dtype` bytes, or the 400 naming the first bad one. */
export function encodeValues(name: string, dtype: TensorDType, values: ArrayLike<unknown>): Uint8Array | string {
  const n = values.length;
  const out = new Uint8Array(n * DTYPE_BYTES[dtype]);
  const view = new DataView(out.buffer);
  const range = RANGE[dtype];
  for (let k = 0; k < n; k++) {
    const v = values[k];
    if (dtype === 'bool') {
      if (typeof v !== 'boolean') return notHeld(name, dtype, k, v);
      out[k] = v ? 1 : 0;
      continue;
    }
    if (typeof v !== 'number') return notHeld(name, dtype, k, v);
    if (range !== undefined && (!Number.isInteger(v) || v < range[0] || v > range[1]))
      return notHeld(name, dtype, k, v);
    switch (dtype) {
      case 'uint8':
        out[k] = v;
        break;
      case 'int8':
        view.setInt8(k, v);
        break;
      case 'uint16':
        view.setUint16(k * 2, v, true);
        break;
      case 'int16':
        view.setInt16(k * 2, v, true);
        break;
      case 'uint32':
        view.setUint32(k * 4, v, true);
        break;
      case 'int32':
        view.setInt32(k * 4, v, true);
        break;
      case 'uint64':
        view.setBigUint64(k * 8, BigInt(v), true);
        break;
      case 'int64':
        view.setBigInt64(k * 8, BigInt(v), true);
        break;
      case 'float16': {
        const h = numberToHalf(v);
        if ((h & 0x7c00) === 0x7c00) return notHeld(name, dtype, k, v);
        view.setUint16(k * 2, h, true);
        break;
      }
      case 'float32':
        view.setFloat32(k * 4, v, true);
        if (!Number.isFinite(view.getFloat32(k * 4, true))) return notHeld(name, dtype, k, v);
        break;
      case 'float64':
        if (!Number.isFinite(v)) return notHeld(name, dtype, k, v);
        view.setFloat64(k * 8, v, true);
        break;
    }
  }
  return out;
}

/**
 * Checks bytes a client sent as `dtype` (a binary tensor): a float must be finite, a BOOL
 * byte 0 or 1; null when they hold, else the 400. Integers need no check: every bit pattern is one.
 */
export function checkBytes(name: string, dtype: TensorDType, bytes: Uint8Array): string | null {
  if (dtype !== 'float32' && dtype !== 'float64' && dtype !== 'float16' && dtype !== 'bool') return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = bytes.byteLength / DTYPE_BYTES[dtype];
  const dt = OIP_DATATYPE[dtype];
  for (let k = 0; k < n; k++) {
    let bad: number | null = null;
    if (dtype === 'float32') {
      const v = view.getFloat32(k * 4, true);
      if (v - v !== 0) bad = v;
    } else if (dtype === 'float64') {
      const v = view.getFloat64(k * 8, true);
      if (v - v !== 0) bad = v;
    } else if (dtype === 'float16') {
      const v = halfToNumber(view.getUint16(k * 2, true));
      if (v - v !== 0) bad = v;
    } else if (dtype === 'bool' && bytes[k]! > 1) {
      return `input '${name}': element ${k} is the byte ${bytes[k]!}, not 0 or 1 (BOOL)`;
    }
    if (bad !== null)
      return dtype === 'float32'
        ? `input '${name}': ${float32Message(k, String(bad))}`
        : `input '${name}': element ${k} (${String(bad)}) is not finite in ${dt}`;
  }
  return null;
}
