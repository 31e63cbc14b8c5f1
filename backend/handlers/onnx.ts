/**
 * The built-in `onnx` handler: each request body is a JSON array of numbers (the model's input
 * width, 784 for the demo MLP); valid rows are stacked into one [B, width] float32 tensor and
 * run once; each answer is the JSON array of the model's first output row (10 probabilities).
 * A bad body fails its own request with 400 and leaves the rest of the batch running.
 */
import { tensorF32 } from '../onnx/ort.js';
import type { HandlerContext, HandlerRequest, HandlerSession, StagedHandler } from './types.js';

/** Input width when model-config gives none: a flattened 28×28 image, as the demo MLP takes. */
export const DEFAULT_INPUT_WIDTH = 784;

/** What preprocess hands to inference: the stacked valid rows and each request's error. */
export interface OnnxBatch {
  /** Row-major [rows.length, width]. */
  readonly input: Float32Array;
  /** Index in the batch of each stacked row. */
  readonly rows: readonly number[];
  /** Per request: its validation error, or null when it was stacked. */
  readonly errors: readonly (Error | null)[];
}

/** What inference hands to postprocess. */
export interface OnnxOutput {
  readonly batch: OnnxBatch;
  /** Row-major [rows.length, width] of the first output; empty when no row was valid. */
  readonly output: Float32Array;
  readonly outputWidth: number;
}

/** Reads `handlerOptions.inputWidth` (a positive integer), else the default. */
export function inputWidthOf(options: Readonly<Record<string, unknown>>): number {
  const w = options['inputWidth'];
  return typeof w === 'number' && Number.isInteger(w) && w > 0 ? w : DEFAULT_INPUT_WIDTH;
}

/** Largest finite float32. */
const FLOAT32_MAX = 3.4028234663852886e38;

/** Checks a row the frontend decoded; writes it into `dst` at `offset` and returns null, or returns why not. */
export function validateInput(input: Float32Array, width: number, dst: Float32Array, offset: number): string | null {
  if (input.length !== width) return `expected ${width} numbers, got ${input.length}`;
  dst.set(input, offset);
  return null;
}

/**
 * Checks one body; writes it into `dst` at `offset` and returns null, or returns why not.
 * Accepts a plain array, or `{"data": [...]}` / `{"input": [...]}` like TorchServe clients send.
 */
export function validateRow(body: unknown, width: number, dst: Float32Array, offset: number): string | null {
  let arr = body;
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const o = body as Record<string, unknown>;
    arr = o['data'] ?? o['input'];
  }
  if (!Array.isArray(arr)) return `expected a JSON array of ${width} numbers, got ${describe(body)}`;
  if (arr.length !== width) return `expected a JSON array of ${width} numbers, got ${arr.length} elements`;
  for (let i = 0; i < width; i++) {
    const v: unknown = arr[i];
    if (typeof v !== 'number' || !Number.isFinite(v)) return `element ${i} is ${describe(v)}, not a finite number`;
    if (Math.abs(v) > FLOAT32_MAX && !Number.isFinite(Math.fround(v)))
      return `element ${i} (${v}) is not finite in float32`;
    dst[offset + i] = v;
  }
  return null;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 20 ? `${v.slice(0, 20)}…` : v)}`;
  return typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`;
}

/** Creates the built-in handler (one per worker: it holds the session). */
export function createOnnxHandler(): StagedHandler {
  let session: HandlerSession | null = null;
  let inputName = '';
  let outputName = '';
  let width = DEFAULT_INPUT_WIDTH;

  return {
    async initialize(ctx: HandlerContext): Promise<void> {
      session = await ctx.createSession(ctx.manifest.modelFile);
      inputName = session.inputNames[0] ?? '';
      outputName = session.outputNames[0] ?? '';
      if (inputName === '' || outputName === '') throw new Error(`${ctx.manifest.modelFile} has no input or no output`);
      // It feeds float32 rows and reads float32 answers: another type failed every batch 500 at
      // run time (onnxruntime's 'Unexpected input data type'); refused at load instead, once.
      for (const [what, name] of [
        ['input', inputName],
        ['output', outputName],
      ] as const) {
        const type = session.valueTypes[name] ?? 'not a tensor';
        if (type !== 'float32')
          throw new Error(
            `${ctx.manifest.modelFile}: its first ${what} '${name}' is ${type}; the built-in onnx handler feeds and reads float32 tensors only (serve this model with a handler of your own: docs/handlers.md)`,
          );
      }
      width = inputWidthOf(ctx.handlerOptions);
    },

    preprocess(requests: readonly HandlerRequest[], ctx: HandlerContext): OnnxBatch {
      const input = new Float32Array(requests.length * width);
      const rows: number[] = [];
      const errors: (Error | null)[] = [];
      for (let i = 0; i < requests.length; i++) {
        const r = requests[i]!;
        const why =
          r.input !== undefined
            ? validateInput(r.input, width, input, rows.length * width)
            : validateRow(r.body, width, input, rows.length * width);
        if (why === null) {
          rows.push(i);
          errors.push(null);
        } else {
          errors.push(ctx.requestError(why, 400));
        }
      }
      return { input: input.subarray(0, rows.length * width), rows, errors };
    },

    async inference(data: unknown): Promise<OnnxOutput> {
      const batch = data as OnnxBatch;
      if (session === null) throw new Error('onnx handler used before initialize');
      if (batch.rows.length === 0) return { batch, output: new Float32Array(0), outputWidth: 0 };
      const out = await session.run({ [inputName]: tensorF32(batch.input, [batch.rows.length, width]) }, [outputName]);
      const t = out[outputName];
      if (t === undefined || !(t.data instanceof Float32Array))
        throw new Error(`output ${outputName} is missing or not float32`);
      const outputWidth = t.data.length / batch.rows.length;
      return { batch, output: t.data, outputWidth };
    },

    postprocess(data: unknown): unknown[] {
      const { batch, output, outputWidth } = data as OnnxOutput;
      const answers: unknown[] = batch.errors.slice();
      batch.rows.forEach((req, k) => {
        answers[req] = Array.from(output.subarray(k * outputWidth, (k + 1) * outputWidth));
      });
      return answers;
    },
  };
}
