/**
 * What a built-in `onnx` model takes, as the frontend checks every request against it before
 * the request is queued: the graph's declared inputs (name, type, shape with dynamic axes,
 * read once per model from the ONNX file by onnx-io.ts through io-cache.ts), whether it batches
 * along a dynamic first axis, its padding rules and its batch byte bound (model-config's
 * `tensors:`). A bad request is a 400 naming the input, its expected shape and what came; it
 * never reaches a worker.
 */
import { excerpt } from '../../schema/files/model-file.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { PadRule, RequestTensors, TensorDType, TensorHead } from '../../schema/tensors.js';
import { DEFAULT_MAX_BATCH_BYTES, dtypeOfDatatype, stackKey, tensorBytes } from '../../schema/tensors.js';
import type { ModelIo, TensorMetadata } from '../store/onnx-io.js';

/** One declared input. */
export interface InputSpec {
  readonly name: string;
  readonly dtype: TensorDType;
  /** The Open Inference Protocol's name of the type (FP32, INT64, BOOL…). */
  readonly datatype: string;
  /** The graph's shape: a size, or -1 for a dynamic axis. */
  readonly shape: readonly number[];
}

/** A built-in onnx model's inputs and batching, as requests are checked against them. */
export interface TensorSpec {
  readonly model: string;
  readonly inputs: readonly InputSpec[];
  readonly outputs: readonly TensorMetadata[];
  /** Every input's first axis is dynamic: requests are rows stacked along it. */
  readonly batched: boolean;
  readonly pad: Readonly<Record<string, PadRule>>;
  readonly maxBatchBytes: number;
}

/**
 * The spec of a model from its graph's IO, or null when an input's type is not one the
 * built-in handler feeds (BYTES, BF16): that model's worker refuses it at load, and says why.
 */
export function tensorSpecOf(config: ModelConfig, io: ModelIo): TensorSpec | null {
  const inputs: InputSpec[] = [];
  for (const t of io.inputs) {
    const dtype = dtypeOfDatatype(t.datatype);
    if (dtype === undefined) return null;
    inputs.push({ name: t.name, dtype, datatype: t.datatype, shape: t.shape });
  }
  return {
    model: config.name,
    inputs,
    outputs: io.outputs,
    batched: inputs.length > 0 && inputs.every((i) => i.shape.length > 0 && i.shape[0] === -1),
    pad: config.tensors?.pad ?? {},
    maxBatchBytes: config.tensors?.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES,
  };
}

/** A declared shape as the messages show it: `N` for the batch axis, `*` for any other dynamic one. */
export function shapeText(shape: readonly number[], batched: boolean): string {
  return `[${shape.map((d, i) => (d !== -1 ? String(d) : batched && i === 0 ? 'N' : '*')).join(',')}]`;
}

/** The inputs a model takes, for the message of a missing or unexpected one. */
function takes(spec: TensorSpec): string {
  return spec.inputs.map((i) => `${i.name} (${i.datatype} ${shapeText(i.shape, spec.batched)})`).join(', ');
}

/** The 400 of a request without one of the model's inputs. */
export function missingInput(spec: TensorSpec, name: string): string {
  return `model '${spec.model}' takes ${spec.inputs.length === 1 ? 'the input' : 'the inputs'} ${takes(spec)}; input '${name}' is missing`;
}

/** The 400 of a request naming an input the model does not have. */
export function unexpectedInput(spec: TensorSpec, name: string): string {
  return `unexpected input ${excerpt(name, 64)} for model '${spec.model}' (it takes ${takes(spec)})`;
}

/** True when `dims` fits `shape` (same rank, every fixed axis equal). */
function fits(dims: readonly number[], shape: readonly number[]): boolean {
  return dims.length === shape.length && shape.every((d, i) => d === -1 || d === dims[i]);
}

/**
 * Checks a whole tensor (an Open Inference Protocol input: its first axis the rows of a batched
 * model) against its declared input; null when it fits, else the 400.
 */
export function checkWhole(
  spec: TensorSpec,
  want: InputSpec,
  datatype: string,
  dims: readonly number[],
): string | null {
  if (datatype === want.datatype && fits(dims, want.shape) && (!spec.batched || dims[0]! >= 1)) return null;
  return `input '${want.name}': expected ${want.datatype} ${shapeText(want.shape, spec.batched)}, got ${datatype} [${dims.join(',')}]`;
}

/**
 * A /predictions tensor's row dims: one row of a batched model may come without the batch
 * axis or with it at 1; any other model takes the whole tensor. The row dims, or the 400.
 */
export function rowDims(spec: TensorSpec, want: InputSpec, dims: readonly number[]): readonly number[] | string {
  if (!spec.batched) {
    if (fits(dims, want.shape)) return dims;
    return `input '${want.name}': expected ${want.datatype} ${shapeText(want.shape, false)}, got [${dims.join(',')}]`;
  }
  const row = want.shape.slice(1);
  if (fits(dims, row)) return dims;
  if (dims[0] === 1 && fits(dims.slice(1), row)) return dims.slice(1);
  return `input '${want.name}': expected ${shapeText(row, false)} (a row of the model's ${want.datatype} ${shapeText(want.shape, true)}), got [${dims.join(',')}]`;
}

/** A checked request's tensors as a job carries them: its batch key and its bytes. */
export interface JobTensors {
  readonly input: RequestTensors;
  readonly batchKey: string;
  readonly inputBytes: number;
}

/** The job form of a request's checked tensors, or the 400 of one over the batch byte bound. */
export function jobTensors(
  spec: TensorSpec,
  heads: readonly TensorHead[],
  data: readonly Uint8Array[],
): JobTensors | string {
  const input: RequestTensors = { heads, data };
  const inputBytes = tensorBytes(input);
  if (inputBytes > spec.maxBatchBytes)
    return `the request's tensors hold ${inputBytes} bytes, more than a batch of model '${spec.model}' holds (${spec.maxBatchBytes}, tensors.maxBatchBytes in its model-config.yaml)`;
  // A model that does not batch along its first axis runs each request alone: any key will do.
  return { input, batchKey: spec.batched ? stackKey(heads, spec.pad) : '', inputBytes };
}
