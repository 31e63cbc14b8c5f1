/**
 * An Open Inference Protocol request to a built-in `onnx` model, both ways: its inputs checked
 * against the graph's declared ones (every input, no other, each of its datatype and shape) and
 * cut into one job per row of the batch axis; and the rows' answers joined back into one output
 * tensor each, with its datatype and shape `[N, …]`.
 */
import { excerpt } from '../../../schema/files/model-file.js';
import type { TensorAnswer, TensorHead } from '../../../schema/tensors.js';
import { isTensorAnswer, OIP_DATATYPE } from '../../../schema/tensors.js';
import type { JobTensors, TensorSpec } from '../tensor-spec.js';
import { checkWhole, jobTensors, missingInput, unexpectedInput } from '../tensor-spec.js';
import { checkBytes, encodeValues } from '../tensor-values.js';
import type { InputTensor, OutputTensor, RequestedOutput } from './tensor-codec.js';
import { OipError } from './tensor-codec.js';

/** The bytes of a decoded input in its declared type (as sent, converted from JSON values, or the fast path's float32). */
function bytesOf(t: InputTensor, spec: TensorSpec, j: number): Uint8Array {
  const want = spec.inputs[j]!;
  let bytes: Uint8Array | string;
  if (t.bytes !== undefined) bytes = checkBytes(want.name, want.dtype, t.bytes) ?? t.bytes;
  else if (t.data instanceof Float32Array) bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  else bytes = encodeValues(want.name, want.dtype, t.data);
  if (typeof bytes === 'string') throw new OipError(400, bytes);
  return bytes;
}

/**
 * The request's jobs: one per row of a batched model (at most `maxRows()`, asked only of more
 * than one row), else one with the whole tensors. Throws the OipError (400) of a bad input.
 */
export function tensorJobs(inputs: readonly InputTensor[], spec: TensorSpec, maxRows: () => number): JobTensors[] {
  const seen = new Set<string>();
  for (const t of inputs) {
    if (!spec.inputs.some((i) => i.name === t.name)) throw new OipError(400, unexpectedInput(spec, t.name));
    if (seen.has(t.name)) throw new OipError(400, `input '${t.name}' is given more than once`);
    seen.add(t.name);
  }
  const ordered = spec.inputs.map((want) => {
    const t = inputs.find((x) => x.name === want.name);
    if (t === undefined) throw new OipError(400, missingInput(spec, want.name));
    const why = checkWhole(spec, want, t.datatype, t.shape);
    if (why !== null) throw new OipError(400, why);
    return t;
  });
  const bytes = ordered.map((t, j) => bytesOf(t, spec, j));
  const job = (heads: TensorHead[], data: Uint8Array[]): JobTensors => {
    const j = jobTensors(spec, heads, data);
    if (typeof j === 'string') throw new OipError(400, j);
    return j;
  };
  if (!spec.batched)
    return [
      job(
        ordered.map((t, j) => ({ name: t.name, dtype: spec.inputs[j]!.dtype, dims: t.shape })),
        bytes,
      ),
    ];
  const n = ordered[0]!.shape[0]!;
  const other = ordered.find((t) => t.shape[0] !== n);
  if (other !== undefined)
    throw new OipError(
      400,
      `input '${other.name}' has ${other.shape[0]} rows (its first axis), input '${ordered[0]!.name}' has ${n}: every input of model '${spec.model}' needs the same`,
    );
  if (n > 1 && n > maxRows())
    throw new OipError(
      400,
      `the request has ${n} rows, more than model '${spec.model}' queues at once (${maxRows()}, --job-queue-size); send at most ${maxRows()} rows a request`,
    );
  const heads = ordered.map((t, j) => ({ name: t.name, dtype: spec.inputs[j]!.dtype, dims: t.shape.slice(1) }));
  const rowBytes = bytes.map((b) => b.byteLength / n);
  const jobs: JobTensors[] = [];
  for (let k = 0; k < n; k++)
    jobs.push(
      job(
        heads,
        bytes.map((b, j) => b.subarray(k * rowBytes[j]!, (k + 1) * rowBytes[j]!)),
      ),
    );
  return jobs;
}

/** The outputs a request asks for: each by a name the graph has, else every output. */
export function requestedOutputs(
  spec: TensorSpec,
  asked: readonly RequestedOutput[] | undefined,
  binary: boolean,
): readonly RequestedOutput[] {
  if (asked === undefined) return spec.outputs.map((o) => ({ name: o.name, binary }));
  for (const o of asked)
    if (!spec.outputs.some((x) => x.name === o.name))
      throw new OipError(
        400,
        `unexpected inference output ${excerpt(o.name, 64)} for model '${spec.model}' (it answers ${spec.outputs.map((x) => x.name).join(', ')})`,
      );
  return asked;
}

/**
 * The rows' answers as one tensor per requested output (`[N, …]` for a batched model). Rows of
 * different shapes (padded in different batches) or an answer that is not the handler's tensors
 * throw: the request gets a 500 naming why instead of a misaligned tensor.
 */
export function tensorOutputs(
  results: readonly unknown[],
  requested: readonly RequestedOutput[],
  batched: boolean,
): OutputTensor[] {
  const answers: TensorAnswer[] = results.map((r, k) => {
    if (!isTensorAnswer(r)) throw new Error(`row ${k} is not the built-in onnx handler's tensors`);
    return r;
  });
  return requested.map((o) => {
    const parts = answers.map((a, k) => {
      const i = a.outputs.findIndex((h) => h.name === o.name);
      if (i < 0) throw new Error(`row ${k} has no output '${o.name}'`);
      return { head: a.outputs[i]!, bytes: a.data[i]! };
    });
    const h0 = parts[0]!.head;
    for (const p of parts) {
      if (p.head.dtype !== h0.dtype || p.head.dims.join(',') !== h0.dims.join(','))
        throw new Error(
          `the rows answered output '${o.name}' in different shapes ([${h0.dims.join(',')}] and [${p.head.dims.join(',')}]): padded in different batches`,
        );
    }
    const total = parts.reduce((a, p) => a + p.bytes.byteLength, 0);
    const bytes = parts.length === 1 ? parts[0]!.bytes : new Uint8Array(total);
    if (parts.length > 1) {
      let at = 0;
      for (const p of parts) {
        bytes.set(p.bytes, at);
        at += p.bytes.byteLength;
      }
    }
    return {
      name: o.name,
      shape: batched ? [parts.length, ...h0.dims] : h0.dims,
      datatype: OIP_DATATYPE[h0.dtype],
      bytes,
      binary: o.binary,
    };
  });
}
