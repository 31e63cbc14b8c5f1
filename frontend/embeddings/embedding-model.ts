/**
 * A `handler: embedding` model: the encoder's worker pool and batcher (a BatchedModel, so inputs
 * of concurrent requests share batches) behind OpenAI's `/v1/embeddings`, with its tokenizer
 * loaded here: the frontend tokenizes, as vLLM's API server does, so a bad input is refused
 * before it reaches a worker. `/predictions` is not served (the route names /v1 instead).
 */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { DEFAULT_TOKENIZER_BYTES, excerpt, readModelText } from '../../schema/files/model-file.js';
import type { EmbeddingJobBody, EmbeddingOptions } from '../../schema/text/embedding-options.js';
import { parseEmbeddingOptions } from '../../schema/text/embedding-options.js';
import { HfTokenizer } from '../../schema/text/hf-tokenizer.js';
import type { JobOutcome } from '../batching/job.js';
import { BatchedModel } from '../models/batched-model.js';
import type { ModelSeries } from '../models/frontend-series.js';
import type { ModelKindContext } from '../models/model-kinds.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import type { ModelDescription, ServedModel } from '../models/served-model.js';

/** The route `/v1/models` names for an embedding model. */
export const EMBEDDINGS_ROUTE = '/v1/embeddings';

/** The model's three families (`ts_embedding_*`), bound once. */
export interface EmbeddingSeries {
  readonly requests: BoundSeries;
  readonly promptTokens: BoundSeries;
  readonly latencySec: BoundSeries;
}

/** An encoder served on `/v1/embeddings`. */
export class EmbeddingModel implements ServedModel {
  readonly kind = 'embedding';
  readonly options: EmbeddingOptions;
  readonly openaiListing: { readonly maxModelLen: number; readonly answers: string };
  readonly series: EmbeddingSeries;
  /** TorchServe's ts_inference_* families (`model_version="default"`): an embeddings request is an inference request of the model. */
  readonly inference: ModelSeries;
  private readonly inner: BatchedModel;
  private readonly log: ModelKindContext['log'];
  private tokenizerValue: HfTokenizer | null = null;
  private tokenizerError: string | null = null;
  /** One past the largest token id the tokenizer knows (its vocabulary and added tokens). */
  vocabSize = 0;

  constructor(config: ModelConfig, ctx: ModelKindContext, modelUrl: string, loadedAtStartup: boolean) {
    this.options = parseEmbeddingOptions(config.handlerOptions);
    this.log = ctx.log;
    this.openaiListing = { maxModelLen: this.options.maxModelLen, answers: EMBEDDINGS_ROUTE };
    this.inner = new BatchedModel(config, {
      pool: ctx.poolDeps,
      series: ctx.series,
      ...(ctx.queueCapacity !== undefined ? { queueCapacity: ctx.queueCapacity } : {}),
      modelUrl,
      loadedAtStartup,
    });
    this.inference = ctx.series.forModel(config.name, 'default');
    const dims = { model_name: config.name };
    this.series = {
      requests: ctx.series.bind('ts_embedding_requests_total', dims),
      promptTokens: ctx.series.bind('ts_embedding_prompt_tokens_total', dims),
      latencySec: ctx.series.bind('ts_embedding_request_latency_seconds', dims),
    };
  }

  get config(): ModelConfig {
    return this.inner.config;
  }

  /** The tokenizer, or why there is none (it failed to load; the model answers 503). */
  get tokenizer(): HfTokenizer | string {
    return this.tokenizerValue ?? this.tokenizerError ?? 'the tokenizer is still loading';
  }

  /** Loads the tokenizer (read off the event loop, bounded, inside the model directory), then the workers. */
  async start(): Promise<void> {
    const dir = this.config.dir;
    try {
      const json = JSON.parse(await readModelText(dir, this.options.tokenizer, DEFAULT_TOKENIZER_BYTES)) as object;
      let cfg: object = {};
      try {
        cfg = JSON.parse(await readModelText(dir, 'tokenizer_config.json')) as object;
      } catch {
        // tokenizer_config.json is optional: the tokenizer.json alone describes the encoding.
      }
      this.tokenizerValue = new HfTokenizer(json, cfg);
      this.vocabSize = vocabSizeOf(json);
    } catch (e) {
      this.tokenizerError = `model ${this.config.name}: its tokenizer failed to load: ${excerpt(e instanceof Error ? e.message : String(e), 200)}`;
      this.log('error', this.tokenizerError);
    }
    await this.inner.start();
  }

  /** Runs one tokenized input through the batcher; resolves with its outcome (a Float32Array body when ok). */
  embed(requestId: string, body: EmbeddingJobBody, cancelled: () => boolean): Promise<JobOutcome> {
    return new Promise((resolve) => {
      const r = this.inner.submit({ requestId, body, arrivalMs: performance.now(), cancelled, done: resolve });
      if (r !== 'queued')
        resolve({
          status: 503,
          body: { message: `Model "${this.config.name}" cannot take the input now (${r.replace('_', ' ')})` },
          queueUs: 0,
        });
    });
  }

  describe(): ModelDescription {
    return { ...this.inner.describe(), kind: this.kind };
  }

  scale(min: number, max: number): Promise<void> {
    return this.inner.scale(min, max);
  }

  drain(): Promise<void> {
    return this.inner.drain();
  }

  stop(): Promise<void> {
    return this.inner.stop();
  }
}

/** One past the largest id of a tokenizer.json's model vocabulary (an object or Unigram's list) and added tokens. */
function vocabSizeOf(json: object): number {
  const j = json as { model?: { vocab?: unknown }; added_tokens?: { id?: unknown }[] };
  const vocab = j.model?.vocab;
  let n = Array.isArray(vocab) ? vocab.length : 0;
  if (typeof vocab === 'object' && vocab !== null && !Array.isArray(vocab))
    for (const id of Object.values(vocab)) if (typeof id === 'number' && id + 1 > n) n = id + 1;
  for (const t of j.added_tokens ?? []) if (typeof t.id === 'number' && t.id + 1 > n) n = t.id + 1;
  return n;
}
