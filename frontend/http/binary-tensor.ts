/**
 * Binary tensors on `/predictions`: `Content-Type: application/octet-stream` with the raw
 * values of the model's one input in its declared type (float32 for the demo mlp),
 * little-endian, and their shape in `x-tensor-shape` (e.g. `1,784`). The bytes are taken as
 * they are (prediction-tensors.ts checks floats are finite).
 */
import type { TensorDType } from '../../schema/tensors.js';
import { DTYPE_BYTES, OIP_DATATYPE } from '../../schema/tensors.js';
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

/** Parses `x-tensor-shape`; the dims, or the failure. */
export function shapeDims(header: string | string[] | undefined, maxElements: number): number[] | BodyFailure {
  if (header === undefined || Array.isArray(header)) {
    return {
      status: 400,
      message: `${SHAPE_HEADER} is required with Content-Type ${BINARY_TENSOR_TYPE} (e.g. ${SHAPE_HEADER}: 1,784)`,
    };
  }
  const dims: number[] = [];
  let size = 1;
  for (const d of header.split(',').map((x) => x.trim())) {
    const n = /^[0-9]{1,9}$/.test(d) ? Number(d) : Number.NaN;
    if (!(n > 0))
      return { status: 400, message: `${SHAPE_HEADER} "${header}" is not a comma-separated list of positive integers` };
    dims.push(n);
    size *= n;
  }
  if (size > maxElements)
    return {
      status: 400,
      message: `${SHAPE_HEADER} "${header}" has ${size} elements, more than ${maxElements} (--max-json-elements)`,
    };
  return dims;
}

/** The body's bytes (a copy) as `dims` of `dtype`, or the failure of a body of another length. */
export function binaryTensorBytes(
  body: Buffer,
  header: string,
  dims: readonly number[],
  dtype: TensorDType,
): Uint8Array | BodyFailure {
  const need = dims.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
  if (body.length !== need) {
    return {
      status: 400,
      message: `body has ${body.length} bytes; ${SHAPE_HEADER} ${header} needs ${need} (${OIP_DATATYPE[dtype]}, little-endian)`,
    };
  }
  // Copied out: the body's bytes may sit in a pooled buffer that is reused.
  return new Uint8Array(body);
}
