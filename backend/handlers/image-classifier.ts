/**
 * The built-in `image_classifier` handler (TorchServe's): each request arrives as the 8-bit
 * pixels the frontend decoded and resized from its image (frontend/image/image-decoder.ts). The
 * batch is normalized into one [B, 3, H, W] (or [B, H, W, 3]) float32 tensor and run once; each answer is TorchServe's top-k `{label: probability}` (softmax first when the
 * model outputs logits), labels from `index_to_name.json` (`{"0": "tench", …}` or
 * `{"0": ["n01440764", "tench"]}`) or the class index. Records `ImageDecodeTime` and
 * `ImagePixels` per request through the handler metrics API.
 */
import * as path from 'node:path';
import { tensorF32 } from '../onnx/ort.js';
import { ModelFileError, readModelText } from '../../schema/files/model-file.js';
import type { ImageClassifierOptions, ImageJobBody } from '../../schema/image/classifier-options.js';
import { writeImageTensor } from '../../schema/image/image-tensor.js';
import { imageInputDims, imageInputSize, parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import type { HandlerContext, HandlerRequest, HandlerSession, StagedHandler } from './types.js';

/** Preprocess → inference: the stacked inputs and each request's error. */
interface ImageBatch {
  readonly input: Float32Array;
  readonly rows: readonly number[];
  readonly errors: readonly (Error | null)[];
}

/** Inference → postprocess. */
interface ImageOutput {
  readonly batch: ImageBatch;
  readonly scores: Float32Array;
  readonly classes: number;
}

/** Softmax of `xs` in place (max subtracted first, so large logits do not overflow). */
export function softmaxInPlace(xs: Float32Array): void {
  let max = -Infinity;
  for (const x of xs) if (x > max) max = x;
  let sum = 0;
  for (let i = 0; i < xs.length; i++) sum += xs[i] = Math.exp(xs[i]! - max);
  for (let i = 0; i < xs.length; i++) xs[i] = xs[i]! / sum;
}

/**
 * TorchServe's answer: the `k` best classes, best first, as `{label: probability}`. (A label that
 * reads as an integer, such as a class index, is listed in numeric order by JSON: JavaScript
 * orders such keys so; the values are the same.)
 */
export function topK(scores: Float32Array, k: number, label: (i: number) => string): Record<string, number> {
  const order = Array.from(scores.keys()).sort((a, b) => scores[b]! - scores[a]! || a - b);
  const out: Record<string, number> = {};
  for (const i of order.slice(0, k)) out[label(i)] = scores[i]!;
  return out;
}

/** Reads `index_to_name.json` (absent: the class indices are the labels). */
export async function readLabels(modelDir: string, file: string): Promise<ReadonlyMap<number, string>> {
  let text: string;
  try {
    text = await readModelText(modelDir, file);
  } catch (e) {
    if (e instanceof ModelFileError && e.problem === 'missing' && file === 'index_to_name.json') return new Map();
    throw e;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: not JSON (${(e as Error).message.slice(0, 80)})`, { cause: e });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new Error(`${file}: expected an object of class index → name`);
  const out = new Map<number, string>();
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    const i = Number(k);
    // TorchServe's ImageNet file maps to [wordnet id, name]: the name is the label.
    const name = Array.isArray(v) && typeof v[v.length - 1] === 'string' ? (v[v.length - 1] as string) : v;
    if (!Number.isInteger(i) || i < 0 || typeof name !== 'string')
      throw new Error(`${file}: entry ${JSON.stringify(k.slice(0, 40))} is not index → name`);
    out.set(i, name);
  }
  return out;
}

/** The body the frontend's decoder sends, at most the model input's size (else null). */
function imageOf(b: unknown, o: ImageClassifierOptions): ImageJobBody | null {
  if (typeof b !== 'object' || b === null) return null;
  const i = b as Partial<ImageJobBody>;
  const ok =
    i.pixels instanceof Uint8Array &&
    Number.isInteger(i.width) &&
    Number.isInteger(i.height) &&
    (i.channels === 1 || i.channels === 3) &&
    i.width! <= o.width &&
    i.height! <= o.height &&
    i.pixels.length === i.width! * i.height! * i.channels &&
    typeof i.info?.decodeMs === 'number';
  return ok ? (i as ImageJobBody) : null;
}

/** Creates the built-in handler (one per worker: it holds the session). */
export function createImageClassifierHandler(): StagedHandler {
  let session: HandlerSession | null = null;
  let inputName = '';
  let outputName = '';
  let opts: ImageClassifierOptions = parseImageClassifierOptions({});
  let labels: ReadonlyMap<number, string> = new Map();
  let size = 0;

  return {
    async initialize(ctx: HandlerContext): Promise<void> {
      const problems: string[] = [];
      opts = parseImageClassifierOptions(ctx.handlerOptions, problems);
      if (problems.length > 0) throw new Error(problems.join('; '));
      size = imageInputSize(opts);
      labels = await readLabels(ctx.modelDir, path.normalize(opts.labels));
      session = await ctx.createSession(ctx.manifest.modelFile);
      inputName = session.inputNames[0] ?? '';
      outputName = session.outputNames[0] ?? '';
      for (const [what, name] of [
        ['input', inputName],
        ['output', outputName],
      ] as const) {
        const type = session.valueTypes[name] ?? 'not a tensor';
        if (type !== 'float32')
          throw new Error(
            `${ctx.manifest.modelFile}: its first ${what} '${name}' is ${type}; the image_classifier handler feeds and reads float32 tensors`,
          );
      }
    },

    preprocess(requests: readonly HandlerRequest[], ctx: HandlerContext): ImageBatch {
      const input = new Float32Array(requests.length * size);
      const rows: number[] = [];
      const errors: (Error | null)[] = [];
      requests.forEach((r, i) => {
        const img = imageOf(r.body, opts);
        if (img === null) {
          errors.push(ctx.requestError('expected an image body (JPEG, PNG or WebP), decoded by the server', 400));
          return;
        }
        writeImageTensor(
          opts,
          { data: img.pixels, width: img.width, height: img.height, channels: img.channels },
          input,
          rows.length * size,
        );
        rows.push(i);
        errors.push(null);
        ctx.metrics.addTime('ImageDecodeTime', img.info.decodeMs, r.requestId, 'ms');
        if (ctx.metrics.records('ImagePixels'))
          ctx.metrics
            .getMetric('ImagePixels', 'histogram')
            .addOrUpdate(img.info.width * img.info.height, { ModelName: ctx.modelName, Level: 'Model' }, r.requestId);
      });
      return { input: input.subarray(0, rows.length * size), rows, errors };
    },

    async inference(data: unknown): Promise<ImageOutput> {
      const batch = data as ImageBatch;
      if (session === null) throw new Error('image_classifier handler used before initialize');
      if (batch.rows.length === 0) return { batch, scores: new Float32Array(0), classes: 0 };
      const out = await session.run({ [inputName]: tensorF32(batch.input, imageInputDims(opts, batch.rows.length)) }, [
        outputName,
      ]);
      const t = out[outputName];
      if (t === undefined || !(t.data instanceof Float32Array))
        throw new Error(`output ${outputName} is missing or not float32`);
      return { batch, scores: t.data, classes: t.data.length / batch.rows.length };
    },

    postprocess(data: unknown): unknown[] {
      const { batch, scores, classes } = data as ImageOutput;
      const answers: unknown[] = batch.errors.slice();
      batch.rows.forEach((req, k) => {
        const row = scores.slice(k * classes, (k + 1) * classes);
        if (opts.softmax) softmaxInPlace(row);
        answers[req] = topK(row, opts.topk, (i) => labels.get(i) ?? String(i));
      });
      return answers;
    },
  };
}
