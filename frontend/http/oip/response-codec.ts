/**
 * The Open Inference Protocol's response body: JSON, or a JSON header followed by the binary
 * outputs (the binary tensor data extension), little-endian, in output order.
 */
import { dtypeOfDatatype } from '../../../schema/tensors.js';
import { nestedText } from '../tensor-json.js';
import { FIXED } from './datatypes.js';

/**
 * One output tensor of a response: its values (`data`: a user handler's FP32 rows) or its
 * little-endian bytes in its datatype (`bytes`: a built-in onnx model's outputs, any type).
 */
export interface OutputTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly datatype: string;
  readonly data?: ArrayLike<number>;
  readonly bytes?: Uint8Array;
  readonly binary: boolean;
}

/** A response to encode. */
export interface InferResponse {
  readonly model_name?: string;
  readonly model_version?: string;
  readonly id?: string;
  readonly outputs: readonly OutputTensor[];
}

/**
 * An encoded response: the JSON part and each binary output's bytes, in order (written as they
 * are: joining a recognizer's 1 MB outputs into one buffer cost a copy and its garbage an
 * image), and the JSON part's length when binary data follows it.
 */
export class EncodedResponse {
  constructor(
    readonly parts: readonly Uint8Array[],
    readonly headerLength: number | null,
  ) {}

  /** The body's bytes. */
  get length(): number {
    return this.parts.reduce((n, p) => n + p.byteLength, 0);
  }

  /** The whole body in one buffer (a copy when it has binary parts). */
  get body(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** An output's values as FP32 little-endian bytes. */
function fp32Bytes(data: ArrayLike<number>): Buffer {
  const bytes = Buffer.alloc(data.length * 4);
  for (let k = 0; k < data.length; k++) bytes.writeFloatLE(data[k]!, k * 4);
  return bytes;
}

/** An output's `data` as a JSON array: from its bytes in its datatype (64-bit integers exact), else its values. */
function dataText(o: OutputTensor): string {
  const dtype = dtypeOfDatatype(o.datatype);
  if (o.bytes !== undefined && dtype !== undefined)
    return nestedText(dtype, [o.bytes.byteLength / elementBytes(o)], o.bytes);
  return JSON.stringify(Array.from(o.data ?? []));
}

function elementBytes(o: OutputTensor): number {
  return FIXED[o.datatype]?.size ?? 4;
}

/** Encodes a response: outputs with `binary` go after the JSON as little-endian bytes, in order. */
export function encodeInferResponse(r: InferResponse): EncodedResponse {
  const chunks: Uint8Array[] = [];
  const outputs = r.outputs.map((o) => {
    const head = `{"name":${JSON.stringify(o.name)},"shape":${JSON.stringify(o.shape)},"datatype":${JSON.stringify(o.datatype)}`;
    if (!o.binary) return `${head},"data":${dataText(o)}}`;
    const bytes = o.bytes ?? fp32Bytes(o.data ?? []);
    chunks.push(bytes);
    return `${head},"parameters":{"binary_data_size":${bytes.byteLength}}}`;
  });
  const top = JSON.stringify({
    ...(r.model_name !== undefined ? { model_name: r.model_name } : {}),
    ...(r.model_version !== undefined ? { model_version: r.model_version } : {}),
    ...(r.id !== undefined ? { id: r.id } : {}),
  });
  const json = Buffer.from(`${top.slice(0, -1)}${top.length > 2 ? ',' : ''}"outputs":[${outputs.join(',')}]}`, 'utf8');
  if (chunks.length === 0) return new EncodedResponse([json], null);
  return new EncodedResponse([json, ...chunks], json.length);
}
