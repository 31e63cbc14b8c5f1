/**
 * A `handler: embedding` model: the encoder's worker pool and batcher (a BatchedModel, so inputs
 * of concurrent requests share batches) behind OpenAI's `/v1/embeddings`, with its tokenizer
 * loaded here: the frontend tokenizes, as vLLM's API server does, so a bad input is refused
 * before it reaches a worker. `/predictions` is not served (the route names /v1 instead).
 */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { EmbeddingJobBody, EmbeddingOptions } from '../../schema/text/embedding-options.js';
import { parseEmbeddingOptions } from '../../schema/text/embedding-options.js';
import type { HfTokenizer } from '../../schema/text/hf-tokenizer.js';
import { loadEmbeddingTokenizer } from './embedding-tokenizer.js';
import type { JobOutcome } from '../batching/job.js';
import { BatchedModel } from '../models/batched-model.js';
import type { FrontendSeries, ModelSeries } from '../models/frontend-series.js';
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

/** Binds model `name`'s three families in `series` (the primary's, or a front's shipped ones). */
export function embeddingSeries(series: Pick<FrontendSeries, 'bind'>, name: string): EmbeddingSeries {
  const dims = { model_name: name };
  return {
    requests: series.bind('ts_embedding_requests_total', dims),
    promptTokens: series.bind('ts_embedding_prompt_tokens_total', dims),
    latencySec: series.bind('ts_embedding_request_latency_seconds', dims),
  };
}

/** What `/v1/embeddings` needs of a model: the primary's EmbeddingModel, or a front's proxy of it. */
export interface EmbeddingTarget {
  readonly config: ModelConfig;
  readonly options: EmbeddingOptions;
  /** The tokenizer, or why there is none (the route answers 503). */
  readonly tokenizer: HfTokenizer | string;
  readonly vocabSize: number;
  readonly series: EmbeddingSeries;
  readonly inference: ModelSeries;
  /** Settles once the tokenizer is loaded (undefined when it is): a front's request waits for it. */
  tokenizerLoaded?(): Promise<void> | undefined;
  embed(requestId: string, body: EmbeddingJobBody, cancelled: () => boolean): Promise<JobOutcome>;
}

/** An encoder served on `/v1/embeddings`. */
export class EmbeddingModel implements ServedModel, EmbeddingTarget {
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
    this.series = embeddingSeries(ctx.series, config.name);
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
    const loaded = await loadEmbeddingTokenizer(this.config.name, this.config.dir, this.options.tokenizer);
    if ('error' in loaded) {
      this.tokenizerError = loaded.error;
      this.log('error', loaded.error);
    } else {
      this.tokenizerValue = loaded.tokenizer;
      this.vocabSize = loaded.vocabSize;
    }
    await this.inner.start();
  }

  /**
   * Runs one tokenized input through the batcher; resolves with its outcome (a Float32Array body
   * when ok). `arrivalMs`: when it arrived (a front's relayed input: when the front read it).
   */
  embed(
    requestId: string,
    body: EmbeddingJobBody,
    cancelled: () => boolean,
    arrivalMs = performance.now(),
  ): Promise<JobOutcome> {
    return new Promise((resolve) => {
      const r = this.inner.submit({ requestId, body, arrivalMs, cancelled, done: resolve });
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
