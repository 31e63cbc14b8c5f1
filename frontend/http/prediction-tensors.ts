/**
 * A `/predictions` body of a built-in `onnx` model as its job's tensors, checked against the
 * graph's declared inputs (tensor-spec.ts). The body is one of:
 * - a JSON array: the model's one input, nested arrays giving its shape (one row of a batched
 *   model: without the batch axis, or with it at 1); a flat array of numbers is a row of
 *   `[N, width]`, as the demo mlp always took it, decoded straight into float32 (json-tensor.ts);
 * - `{"data": [...]}` or `{"input": [...]}` (TorchServe clients' wrappers) for a one-input model;
 * - a JSON object of named inputs, `{"input_ids": [[...]], "attention_mask": [[...]]}`: every
 *   input of the graph, no other key;
 * - a binary tensor (binary-tensor.ts) of the model's one input, in its declared type.
 * Anything wrong is a 400 naming the input; the request never reaches a worker.
 */
import type { TensorHead } from '../../schema/tensors.js';
import type { BodyLimits } from '../models/body-limits.js';
import { binaryTensorBytes, shapeDims } from './binary-tensor.js';
import { parseJsonBody } from './json-body.js';
import { decodeJsonTensor } from './json-tensor.js';
import type { BodyFailure } from './read-body.js';
import { nestedTensor } from './tensor-json.js';
import type { InputSpec, JobTensors, TensorSpec } from './tensor-spec.js';
import { jobTensors, missingInput, rowDims, unexpectedInput } from './tensor-spec.js';
import { checkBytes, encodeValues } from './tensor-values.js';

function bad(message: string): BodyFailure {
  return { status: 400, message };
}

/** The one input of a model the body names none of, or the 400 of a model with several. */
function onlyInput(spec: TensorSpec): InputSpec | BodyFailure {
  if (spec.inputs.length === 1) return spec.inputs[0]!;
  return bad(
    `model '${spec.model}' takes ${spec.inputs.length} inputs: send a JSON object of them by name (${spec.inputs.map((i) => `"${i.name}": [...]`).join(', ')})`,
  );
}

/** One input's head and bytes from its dims and bytes, checked. */
function tensorOf(
  spec: TensorSpec,
  want: InputSpec,
  dims: readonly number[],
  bytes: Uint8Array | string,
): { head: TensorHead; bytes: Uint8Array } | BodyFailure {
  const row = rowDims(spec, want, dims);
  if (typeof row === 'string') return bad(row);
  if (typeof bytes === 'string') return bad(bytes);
  return { head: { name: want.name, dtype: want.dtype, dims: row }, bytes };
}

/** One input from its JSON value (nested arrays, or one number for an input of no axes). */
function fromJson(
  spec: TensorSpec,
  want: InputSpec,
  v: unknown,
): { head: TensorHead; bytes: Uint8Array } | BodyFailure {
  const t = nestedTensor(want.name, v);
  if (typeof t === 'string') return bad(t);
  return tensorOf(spec, want, t.dims, encodeValues(want.name, want.dtype, t.values));
}

function done(spec: TensorSpec, parts: readonly { head: TensorHead; bytes: Uint8Array }[]): JobTensors | BodyFailure {
  const j = jobTensors(
    spec,
    parts.map((p) => p.head),
    parts.map((p) => p.bytes),
  );
  return typeof j === 'string' ? bad(j) : j;
}

/** A binary tensor body (`x-tensor-shape`) as the model's one input. */
export function binaryPrediction(
  spec: TensorSpec,
  body: Buffer,
  header: string | string[] | undefined,
  limits: BodyLimits,
): JobTensors | BodyFailure {
  const want = onlyInput(spec);
  if ('status' in want) return want;
  const dims = shapeDims(header, limits.maxElements);
  if (!Array.isArray(dims)) return dims;
  const bytes = binaryTensorBytes(body, String(header), dims, want.dtype);
  if ('status' in bytes) return bytes;
  const t = tensorOf(spec, want, dims, checkBytes(want.name, want.dtype, bytes) ?? bytes);
  return 'status' in t ? t : done(spec, [t]);
}

/** A JSON body as the model's tensors. */
export function jsonPrediction(spec: TensorSpec, body: Buffer, limits: BodyLimits): JobTensors | BodyFailure {
  // The usual flat array of numbers for a one-input float32 model, without JSON.parse.
  const one = spec.inputs.length === 1 ? spec.inputs[0]! : undefined;
  if (one?.dtype === 'float32') {
    const fast = decodeJsonTensor(body, limits.maxElements);
    if (fast.kind === 'error') return bad(fast.message);
    if (fast.kind === 'tensor') {
      const t = tensorOf(spec, one, [fast.data.length], new Uint8Array(fast.data.buffer, 0, fast.data.byteLength));
      return 'status' in t ? t : done(spec, [t]);
    }
  }
  const parsed = parseJsonBody(body, limits);
  if ('status' in parsed) return parsed;
  const v = parsed.value;
  if (v === undefined) return bad('missing request body: send the model input as JSON');
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    const want = onlyInput(spec);
    if ('status' in want) return want;
    const t = fromJson(spec, want, v);
    return 'status' in t ? t : done(spec, [t]);
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  // TorchServe clients' {"data": [...]} / {"input": [...]} around a one-input model's tensor.
  if (
    one !== undefined &&
    keys.length === 1 &&
    !Object.hasOwn(o, one.name) &&
    (keys[0] === 'data' || keys[0] === 'input')
  ) {
    const t = fromJson(spec, one, o[keys[0]]);
    return 'status' in t ? t : done(spec, [t]);
  }
  for (const k of keys) if (!spec.inputs.some((i) => i.name === k)) return bad(unexpectedInput(spec, k));
  const parts: { head: TensorHead; bytes: Uint8Array }[] = [];
  for (const want of spec.inputs) {
    if (!Object.hasOwn(o, want.name)) return bad(missingInput(spec, want.name));
    const t = fromJson(spec, want, o[want.name]);
    if ('status' in t) return t;
    parts.push(t);
  }
  return done(spec, parts);
}
