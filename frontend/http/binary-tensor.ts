/**
 * Binary tensors on `/predictions`: `Content-Type: application/octet-stream` with the raw
 * float32 values, little-endian, and their shape in `x-tensor-shape` (e.g. `1,784`). The
 * bytes become a Float32Array as they are; every value must be finite.
 */
import type { BodyFailure } from './read-body.js';

/** The content type of a binary tensor body. */
export const BINARY_TENSOR_TYPE = 'application/octet-stream';

/** The header holding a binary tensor's shape. */
export const SHAPE_HEADER = 'x-tensor-shape';

/** True when the request sends a binary tensor (by its content type). */
export function isBinaryTensor(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semi = contentType.indexOf(';');
  return (semi < 0 ? contentType : contentType.slice(0, semi)).trim().toLowerCase() === BINARY_TENSOR_TYPE;
}

/** Parses `x-tensor-shape`; the element count, or the failure. */
export function shapeSize(header: string | string[] | undefined, maxElements: number): number | BodyFailure {
  if (header === undefined || Array.isArray(header)) {
    return {
      status: 400,
      message: `${SHAPE_HEADER} is required with Content-Type ${BINARY_TENSOR_TYPE} (e.g. ${SHAPE_HEADER}: 1,784)`,
    };
  }
  const dims = header.split(',').map((d) => d.trim());
  let size = 1;
  for (const d of dims) {
    const n = /^[0-9]{1,9}$/.test(d) ? Number(d) : Number.NaN;
    if (!(n > 0))
      return { status: 400, message: `${SHAPE_HEADER} "${header}" is not a comma-separated list of positive integers` };
    size *= n;
  }
  if (size > maxElements)
    return {
      status: 400,
      message: `${SHAPE_HEADER} "${header}" has ${size} elements, more than ${maxElements} (--max-json-elements)`,
    };
  return size;
}

/** The body as float32 values of `size` elements, or the failure. */
export function decodeBinaryTensor(body: Buffer, header: string, size: number): Float32Array | BodyFailure {
  if (body.length !== size * 4) {
    return {
      status: 400,
      message: `body has ${body.length} bytes; ${SHAPE_HEADER} ${header} needs ${size * 4} (float32, little-endian)`,
    };
  }
  // Copied into its own aligned buffer: the body's bytes may sit at any offset of a pooled one.
  const out = new Float32Array(size);
  new Uint8Array(out.buffer).set(body);
  for (let i = 0; i < size; i++) {
    const v = out[i]!;
    if (v - v !== 0) return { status: 400, message: `element ${i} is ${String(v)}, not a finite float32` };
  }
  return out;
}
