/**
 * The built-in `embedding` handler: an encoder (BERT-style ONNX: int64 `input_ids`,
 * `attention_mask` and, when the graph has it, `token_type_ids` → `last_hidden_state` [B, T, H])
 * over inputs the frontend tokenized. A batch is right-padded to its longest input (mask 0 on
 * the padding), run once, and each row pooled (mean over its real tokens, its first token, or its
 * last) and L2-normalized as model-config says. Each answer is a Float32Array. Records
 * `EmbeddingBatchTokens` (the padded B × T the batch ran) through the handler metrics API.
 */
import { tensorI64 } from '../onnx/ort.js';
import type { OrtTensorInput } from '../onnx/ort.js';
import type { EmbeddingJobBody, EmbeddingOptions } from '../../schema/text/embedding-options.js';
import { parseEmbeddingOptions, poolHidden } from '../../schema/text/embedding-options.js';
import type { HandlerContext, HandlerRequest, HandlerSession, StagedHandler } from './types.js';

/** Preprocess → inference. */
interface EmbeddingBatch {
  readonly rows: readonly number[];
  readonly lengths: readonly number[];
  readonly dims: readonly (number | undefined)[];
  readonly errors: readonly (Error | null)[];
  readonly width: number;
  readonly feeds: Readonly<Record<string, OrtTensorInput>>;
}

/** Inference → postprocess. */
interface EmbeddingOutput {
  readonly batch: EmbeddingBatch;
  readonly hidden: Float32Array;
  readonly size: number;
}

function bodyOf(b: unknown, maxLen: number): EmbeddingJobBody | string {
  if (typeof b !== 'object' || b === null) return 'expected tokenized input (the server tokenizes /v1/embeddings)';
  const { ids, typeIds, dimensions } = b as Partial<EmbeddingJobBody>;
  if (!Array.isArray(ids) || ids.length === 0 || ids.length > maxLen) return `expected 1..${maxLen} token ids`;
  if (!Array.isArray(typeIds) || typeIds.length !== ids.length) return 'expected one token type id per token';
  return { ids, typeIds, ...(dimensions !== undefined ? { dimensions } : {}) };
}

/** Creates the built-in handler (one per worker: it holds the session). */
export function createEmbeddingHandler(): StagedHandler {
  let session: HandlerSession | null = null;
  let opts: EmbeddingOptions = parseEmbeddingOptions({});
  let output = '';
  let hasTypes = false;

  return {
    async initialize(ctx: HandlerContext): Promise<void> {
      const problems: string[] = [];
      opts = parseEmbeddingOptions(ctx.handlerOptions, problems);
      if (problems.length > 0) throw new Error(problems.join('; '));
      session = await ctx.createSession(ctx.manifest.modelFile);
      const file = ctx.manifest.modelFile;
      for (const name of ['input_ids', 'attention_mask'])
        if (session.valueTypes[name] !== 'int64')
          throw new Error(
            `${file}: the embedding handler needs an int64 input '${name}' (inputs: ${session.inputNames.join(', ')})`,
          );
      hasTypes = session.inputNames.includes('token_type_ids');
      output = session.outputNames.includes('last_hidden_state') ? 'last_hidden_state' : (session.outputNames[0] ?? '');
      if (session.valueTypes[output] !== 'float32')
        throw new Error(`${file}: output '${output}' is not a float32 tensor [batch, tokens, hidden]`);
    },

    preprocess(requests: readonly HandlerRequest[], ctx: HandlerContext): EmbeddingBatch {
      const good: EmbeddingJobBody[] = [];
      const rows: number[] = [];
      const errors: (Error | null)[] = [];
      requests.forEach((r, i) => {
        const b = bodyOf(r.body, opts.maxModelLen);
        if (typeof b === 'string') return errors.push(ctx.requestError(b, 400));
        good.push(b);
        rows.push(i);
        errors.push(null);
      });
      const width = Math.max(0, ...good.map((b) => b.ids.length));
      const ids = new BigInt64Array(good.length * width);
      const mask = new BigInt64Array(good.length * width);
      const types = new BigInt64Array(good.length * width);
      good.forEach((b, k) => {
        for (let t = 0; t < b.ids.length; t++) {
          ids[k * width + t] = BigInt(b.ids[t]!);
          mask[k * width + t] = 1n;
          types[k * width + t] = BigInt(b.typeIds[t]!);
        }
      });
      const dims = [good.length, width];
      const feeds: Record<string, OrtTensorInput> = {
        input_ids: tensorI64(ids, dims),
        attention_mask: tensorI64(mask, dims),
      };
      if (hasTypes) feeds['token_type_ids'] = tensorI64(types, dims);
      if (good.length > 0) ctx.metrics.addCounter('EmbeddingBatchTokens', good.length * width);
      return {
        rows,
        lengths: good.map((b) => b.ids.length),
        dims: good.map((b) => b.dimensions),
        errors,
        width,
        feeds,
      };
    },

    async inference(data: unknown): Promise<EmbeddingOutput> {
      const batch = data as EmbeddingBatch;
      if (session === null) throw new Error('embedding handler used before initialize');
      if (batch.rows.length === 0) return { batch, hidden: new Float32Array(0), size: 0 };
      const out = (await session.run(batch.feeds, [output]))[output];
      if (out === undefined || !(out.data instanceof Float32Array) || out.dims.length !== 3)
        throw new Error(`output ${output} is missing or not float32 [batch, tokens, hidden]`);
      return { batch, hidden: out.data, size: out.dims[2]! };
    },

    postprocess(data: unknown): unknown[] {
      const { batch, hidden, size } = data as EmbeddingOutput;
      const answers: unknown[] = batch.errors.slice();
      const stride = batch.width * size;
      batch.rows.forEach((req, k) => {
        const h = hidden.subarray(k * stride, (k + 1) * stride);
        const want = batch.dims[k] ?? size;
        answers[req] = poolHidden(h, batch.lengths[k]!, size, opts.pooling, opts.normalize, Math.min(want, size));
      });
      return answers;
    },
  };
}
