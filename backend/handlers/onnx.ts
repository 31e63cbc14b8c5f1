/**
 * The built-in `onnx` handler: any tensor model. The frontend decodes each request into the
 * graph's named inputs and checks them against the graph's declared types and shapes (a bad one
 * never gets here); this handler groups the batch's requests whose tensors stack, runs each
 * group once with every input, and answers each request with its rows of every output, named.
 * A model whose every input has a dynamic first axis is batched along it; any other runs each
 * request alone, on its whole tensors.
 */
import type { OrtAnyTensor } from '../onnx/ort.js';
import type { PadRule, RequestTensors, TensorAnswer, TensorHead } from '../../schema/tensors.js';
import { isTensorDType, stackKey, TENSOR_ANSWER } from '../../schema/tensors.js';
import { bytesOf, outputRow, stackInput } from './tensor-stack.js';
import type { HandlerContext, HandlerRequest, HandlerSession, StagedHandler } from './types.js';

/** One run of the graph: the batch's requests it answers and its feeds. */
export interface OnnxGroup {
  readonly rows: readonly number[];
  readonly feeds: Readonly<Record<string, OrtAnyTensor>>;
}

/** What preprocess hands to inference: the groups, and each request's error (null when it is in a group). */
export interface OnnxBatch {
  readonly groups: readonly OnnxGroup[];
  readonly errors: readonly (Error | null)[];
}

/** What inference hands to postprocess: each group's outputs. */
export interface OnnxOutput {
  readonly batch: OnnxBatch;
  readonly outputs: readonly Readonly<Record<string, OrtAnyTensor>>[];
}

/** True when every input's first axis is dynamic: requests then stack along it. */
export function batchesAlongFirstAxis(session: HandlerSession): boolean {
  const shapes = session.valueShapes;
  if (shapes === undefined) return false;
  return session.inputNames.every((n) => {
    const s = shapes[n];
    return s !== undefined && s.length > 0 && s[0] === -1;
  });
}

/** Creates the built-in handler (one per worker: it holds the session). */
export function createOnnxHandler(): StagedHandler {
  let session: HandlerSession | null = null;
  let batched = false;
  let pad: Readonly<Record<string, PadRule>> = {};

  return {
    async initialize(ctx: HandlerContext): Promise<void> {
      const s = await ctx.createSession(ctx.manifest.modelFile);
      if (s.inputNames.length === 0 || s.outputNames.length === 0)
        throw new Error(`${ctx.manifest.modelFile} has no input or no output`);
      // A string or sequence value would fail every batch at run time: refused at load instead, once.
      for (const name of [...s.inputNames, ...s.outputNames]) {
        const type = s.valueTypes[name] ?? 'not a tensor';
        if (!isTensorDType(type))
          throw new Error(
            `${ctx.manifest.modelFile}: '${name}' is ${type}; the built-in onnx handler feeds and reads numeric and bool tensors only (serve this model with a handler of your own: docs/handlers.md)`,
          );
      }
      session = s;
      batched = batchesAlongFirstAxis(s);
      pad = ctx.manifest.tensors?.pad ?? {};
      // A rule the graph cannot follow would pad nothing, silently: refused at load instead.
      for (const [name, rule] of Object.entries(pad)) {
        const shape = s.valueShapes?.[name];
        if (!s.inputNames.includes(name))
          throw new Error(
            `tensors.pad.${name}: the model has no input '${name}' (it takes ${s.inputNames.join(', ')})`,
          );
        if (!batched) throw new Error(`tensors.pad.${name}: the model is not batched (an input's first axis is fixed)`);
        if (shape !== undefined && (rule.axis >= shape.length || shape[rule.axis] !== -1))
          throw new Error(
            `tensors.pad.${name}.axis: axis ${rule.axis} of '${name}' [${shape.join(',')}] is not a dynamic axis (-1)`,
          );
      }
    },

    preprocess(requests: readonly HandlerRequest[], ctx: HandlerContext): OnnxBatch {
      if (session === null) throw new Error('onnx handler used before initialize');
      const inputs = session.inputNames;
      const errors: (Error | null)[] = [];
      const byKey = new Map<string, number[]>();
      requests.forEach((r, i) => {
        const t = r.tensors;
        // The frontend decodes every request of a built-in onnx model; a JSON body means it could not read the graph.
        if (t === undefined || t.heads.length !== inputs.length || t.heads.some((h, j) => h.name !== inputs[j])) {
          errors.push(
            ctx.requestError(
              `the built-in onnx handler takes the inputs ${inputs.join(', ')} as tensors the frontend decodes; this request has ${t === undefined ? 'a JSON body' : t.heads.map((h) => h.name).join(', ')}`,
              400,
            ),
          );
          return;
        }
        errors.push(null);
        const key = batched ? stackKey(t.heads, pad) : `#${i}`;
        const group = byKey.get(key);
        if (group === undefined) byKey.set(key, [i]);
        else group.push(i);
      });
      const groups = [...byKey.values()].map((rows): OnnxGroup => {
        const tensors = rows.map((i) => requests[i]!.tensors!);
        return { rows, feeds: batched ? stacked(tensors, inputs, pad) : whole(tensors[0]!) };
      });
      if (ctx.metrics.records('RequestBatchSize'))
        ctx.metrics.getMetric('RequestBatchSize', 'gauge').addOrUpdate(requests.length, { ModelName: ctx.modelName });
      if (ctx.metrics.records('OnnxRequestCount'))
        ctx.metrics
          .getMetric('OnnxRequestCount', 'counter')
          .addOrUpdate(requests.length - errors.filter((e) => e !== null).length, { ModelName: ctx.modelName });
      return { groups, errors };
    },

    async inference(data: unknown): Promise<OnnxOutput> {
      const batch = data as OnnxBatch;
      const s = session;
      if (s === null) throw new Error('onnx handler used before initialize');
      const outputs: Readonly<Record<string, OrtAnyTensor>>[] = [];
      // Outputs of every element type come back as the typed array onnxruntime gives it (OrtAnyTensor).
      for (const g of batch.groups) outputs.push((await s.run(g.feeds)) as unknown as Record<string, OrtAnyTensor>);
      return { batch, outputs };
    },

    postprocess(data: unknown, ctx: HandlerContext): unknown[] {
      const { batch, outputs } = data as OnnxOutput;
      const names = session?.outputNames ?? [];
      const answers: unknown[] = batch.errors.slice();
      batch.groups.forEach((g, gi) => {
        const out = outputs[gi]!;
        g.rows.forEach((req, k) => {
          answers[req] = batched ? rowAnswer(names, out, k, g.rows.length, ctx) : wholeAnswer(names, out);
        });
      });
      return answers;
    },
  };
}

/** The group's feeds: each input stacked along a new first axis. */
function stacked(
  rows: readonly RequestTensors[],
  inputs: readonly string[],
  pad: Readonly<Record<string, PadRule>>,
): Record<string, OrtAnyTensor> {
  const feeds: Record<string, OrtAnyTensor> = {};
  inputs.forEach((name, j) => (feeds[name] = stackInput(rows, j, pad[name])));
  return feeds;
}

/** One request's whole tensors as feeds (a model that does not batch along its first axis). */
function whole(t: RequestTensors): Record<string, OrtAnyTensor> {
  const feeds: Record<string, OrtAnyTensor> = {};
  t.heads.forEach((h, j) => {
    // A copy of one row, in a buffer of its own (the batch's bytes may sit at any alignment).
    feeds[h.name] = { ...stackInput([t], j, undefined), dims: h.dims };
  });
  return feeds;
}

/** Request `k`'s rows of every output; an output without the batch's rows fails the request (500). */
function rowAnswer(
  names: readonly string[],
  out: Readonly<Record<string, OrtAnyTensor>>,
  k: number,
  rows: number,
  ctx: HandlerContext,
): TensorAnswer | Error {
  const heads: TensorHead[] = [];
  const data: Uint8Array[] = [];
  for (const name of names) {
    const t = out[name];
    if (t === undefined || t.dims[0] !== rows)
      return ctx.requestError(
        `output '${name}' has shape [${t?.dims.join(',') ?? ''}], not one row per request of the batch of ${rows}`,
        500,
      );
    const row = outputRow(name, t, k);
    heads.push(row.head);
    data.push(row.bytes);
  }
  return { kind: TENSOR_ANSWER, outputs: heads, data };
}

/** Every output whole (a model that does not batch along its first axis). */
function wholeAnswer(names: readonly string[], out: Readonly<Record<string, OrtAnyTensor>>): TensorAnswer {
  const present = names.filter((n) => out[n] !== undefined);
  return {
    kind: TENSOR_ANSWER,
    outputs: present.map((name) => ({ name, dtype: out[name]!.type, dims: out[name]!.dims })),
    data: present.map((name) => bytesOf(out[name]!.data)),
  };
}
