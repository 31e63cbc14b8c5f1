/**
 * A front process's proxy of the primary's embedding model (`--api-server-count > 1`): the
 * front's `/v1/embeddings` tokenizes here with the model's own tokenizer (loaded in the
 * background from its directory, as a generation proxy loads its vocabulary) and relays each
 * input as a job to the primary, whose EmbeddingModel batches it on its workers
 * (model-relay.ts). The route's families are recorded here, in the front, and shipped to the
 * primary: once per request, as without fronts.
 */
import { performance } from 'perf_hooks';
import type { EmbeddingJobBody, EmbeddingOptions } from '../../schema/text/embedding-options.js';
import { parseEmbeddingOptions } from '../../schema/text/embedding-options.js';
import type { HfTokenizer } from '../../schema/text/hf-tokenizer.js';
import type { JobOutcome } from '../batching/job.js';
import type { EmbeddingSeries, EmbeddingTarget } from '../embeddings/embedding-model.js';
import { EMBEDDINGS_ROUTE, embeddingSeries } from '../embeddings/embedding-model.js';
import { loadEmbeddingTokenizer } from '../embeddings/embedding-tokenizer.js';
import type { FrontendSeries, ModelSeries } from '../models/frontend-series.js';
import type { ServedModel } from '../models/served-model.js';
import type { ModelSnapshot } from './messages.js';
import type { PrimaryLink } from './remote-models.js';
import { RemoteModel } from './remote-models.js';

/** An embedding model served by the primary. */
export class RemoteEmbeddingModel extends RemoteModel implements ServedModel, EmbeddingTarget {
  readonly kind = 'embedding';
  readonly series: EmbeddingSeries;
  readonly inference: ModelSeries;
  private loadedFor = '';
  private tokenizerValue: HfTokenizer | null = null;
  private tokenizerError: string | null = null;
  private loading: Promise<void> = Promise.resolve();
  private optionsValue: { readonly dir: string; readonly options: EmbeddingOptions } | null = null;
  vocabSize = 0;

  constructor(snapshot: ModelSnapshot, link: PrimaryLink, series: FrontendSeries) {
    super(snapshot, link);
    this.series = embeddingSeries(series, snapshot.config.name);
    this.inference = series.forModel(snapshot.config.name, 'default');
    this.startLoad();
  }

  /** Its handler options, parsed once per directory (the table's config is a new object every refresh). */
  get options(): EmbeddingOptions {
    const { dir, handlerOptions } = this.snapshot.config;
    if (this.optionsValue?.dir !== dir) this.optionsValue = { dir, options: parseEmbeddingOptions(handlerOptions) };
    return this.optionsValue.options;
  }

  get openaiListing(): { readonly maxModelLen: number; readonly answers: string } {
    return { maxModelLen: this.options.maxModelLen, answers: EMBEDDINGS_ROUTE };
  }

  get tokenizer(): HfTokenizer | string {
    this.startLoad();
    return this.tokenizerValue ?? this.tokenizerError ?? `model ${this.config.name}: its tokenizer is still loading`;
  }

  tokenizerLoaded(): Promise<void> | undefined {
    this.startLoad();
    return this.tokenizerValue !== null || this.tokenizerError !== null ? undefined : this.loading;
  }

  embed(requestId: string, body: EmbeddingJobBody, cancelled: () => boolean): Promise<JobOutcome> {
    return new Promise((resolve) => {
      // The batcher's own refusal at once: no worker wanted (the primary names every other one).
      if (this.snapshot.description.minWorkers === 0) {
        resolve({
          status: 503,
          body: { message: `Model "${this.config.name}" cannot take the input now (unavailable)` },
          queueUs: 0,
        });
        return;
      }
      this.link.submit(this.config.name, { requestId, body, arrivalMs: performance.now(), cancelled, done: resolve });
    });
  }

  /** Loads the tokenizer of the model's directory (again when the name is registered from another). */
  private startLoad(): void {
    const { name, dir } = this.snapshot.config;
    const file = this.options.tokenizer;
    const key = `${dir}\0${file}`;
    if (key === this.loadedFor) return;
    this.loadedFor = key;
    this.tokenizerValue = null;
    this.tokenizerError = null;
    this.loading = loadEmbeddingTokenizer(name, dir, file).then((loaded) => {
      if (this.loadedFor !== key) return;
      if ('error' in loaded) this.tokenizerError = loaded.error;
      else {
        this.tokenizerValue = loaded.tokenizer;
        this.vocabSize = loaded.vocabSize;
      }
    });
  }
}
