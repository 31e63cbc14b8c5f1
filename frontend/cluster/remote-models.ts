/**
 * A front process's view of the primary's models: each registered model is a proxy whose
 * `submit` (batched models), `generate` (generation models) or `speak` (pipelines) sends the request to the
 * primary over IPC and calls back when the answer arrives. The proxies answer `describe()`
 * from the last model table the primary sent, so `/ping`, `/v2/.../ready` and the "no worker"
 * refusals read the same state the primary would.
 */
import { randomUUID } from 'crypto';
import { performance } from 'perf_hooks';
import { traceIds } from '../metrics/exposition/trace-ids.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { SubmitResult } from '../batching/batcher.js';
import type { Job } from '../batching/job.js';
import type { GenerateRefused, GenerateRequest, GenerationHandle } from '../generation/generation-model.js';
import type { GenerationSink } from '../generation/generation-engine.js';
import type { GenerationTarget } from '../openai/generation-target.js';
import type { ModelDescription, ServedModel } from '../models/served-model.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import { ImageDecoder } from '../image/image-decoder.js';
import { parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import type { FrontGenEvent, FrontJob, FrontJobDone, FrontSpeechEvent, FromFront, ModelSnapshot } from './messages.js';
import type { SpeakingModel } from '../openai/audio.js';
import type { ModelVocab } from '../generation/model-vocab.js';
import { modelVocab } from '../generation/model-vocab.js';
import { BackgroundVocab } from '../generation/load-vocab.js';
import type { SpeakHandle, SpeakRequest, SpeakSink } from '../pipeline/speak.js';

/** How often a front looks for jobs whose client went away (to cancel them at the primary). */
const CANCEL_SCAN_MS = 200;

/** The IPC link to the primary: numbered requests and their callbacks. */
export class PrimaryLink {
  private nextId = 1;
  private readonly jobs = new Map<number, Job>();
  private readonly gens = new Map<number, { readonly sink: GenerationSink; left: number }>();
  private readonly speaks = new Map<number, SpeakSink>();
  private readonly timer: NodeJS.Timeout;
  /** Jobs read in this turn of the event loop: they leave together, in one message. */
  private outbox: FrontJob[] = [];
  private readonly flushJobs = (): void => {
    const jobs = this.outbox;
    this.outbox = [];
    if (jobs.length > 0) this.send({ type: 'tsserve.front.jobs', jobs });
  };

  constructor(private readonly send: (m: FromFront) => void) {
    this.timer = setInterval(() => this.scanCancelled(), CANCEL_SCAN_MS);
    this.timer.unref();
  }

  /** Requests sent and not answered yet. */
  get pending(): number {
    return this.jobs.size + this.gens.size + this.speaks.size;
  }

  submit(model: string, job: Job): void {
    const id = this.nextId++;
    this.jobs.set(id, job);
    if (this.outbox.length === 0) setImmediate(this.flushJobs);
    // The route noted the request's trace id in this process; the exemplars are the primary's.
    const traceId = traceIds.get(job.requestId);
    this.outbox.push({
      type: 'tsserve.front.job',
      id,
      model,
      requestId: job.requestId,
      body: job.input === undefined ? job.body : null,
      ...(job.input !== undefined ? { input: job.input } : {}),
      ...(job.batchKey !== undefined ? { batchKey: job.batchKey } : {}),
      ...(job.inputBytes !== undefined ? { inputBytes: job.inputBytes } : {}),
      arrivalEpochMs: performance.timeOrigin + job.arrivalMs,
      ...(traceId !== undefined ? { traceId } : {}),
    });
  }

  generate(model: string, req: GenerateRequest, requestId: string, sink: GenerationSink): () => void {
    const id = this.nextId++;
    this.gens.set(id, { sink, left: req.params.n ?? 1 });
    this.send({
      type: 'tsserve.front.generate',
      id,
      model,
      requestId,
      prompt: req.prompt,
      params: req.params,
      arrivalEpochMs: performance.timeOrigin + req.arrivalMs,
      ...(req.traceId !== undefined ? { traceId: req.traceId } : {}),
      ...(req.group !== undefined ? { group: req.group } : {}),
    });
    return () => {
      if (this.gens.delete(id)) this.send({ type: 'tsserve.front.cancel', id });
    };
  }

  speak(model: string, req: SpeakRequest, requestId: string, sink: SpeakSink): () => void {
    const id = this.nextId++;
    this.speaks.set(id, sink);
    this.send({
      type: 'tsserve.front.speak',
      id,
      model,
      requestId,
      prompt: req.prompt,
      params: req.params,
      streamed: req.streamed,
      ...(req.codes !== undefined ? { codes: req.codes } : {}),
      arrivalEpochMs: performance.timeOrigin + req.arrivalMs,
    });
    return () => {
      if (this.speaks.delete(id)) this.send({ type: 'tsserve.front.cancel', id });
    };
  }

  speech(m: FrontSpeechEvent): void {
    const sink = this.speaks.get(m.id);
    if (sink === undefined) return;
    if (m.accepted === true) sink.onAccepted?.();
    if (m.text !== undefined) sink.onText(m.text);
    if (m.audio !== undefined) sink.onAudio(m.audio);
    if (m.done !== undefined) {
      this.speaks.delete(m.id);
      sink.onDone(m.done);
    }
    if (m.error !== undefined) {
      this.speaks.delete(m.id);
      sink.onError(m.error.status, m.error.message);
    }
  }

  done(m: FrontJobDone): void {
    const job = this.jobs.get(m.id);
    if (job === undefined) return;
    this.jobs.delete(m.id);
    job.done(m.outcome);
  }

  gen(m: FrontGenEvent): void {
    const g = this.gens.get(m.id);
    if (g === undefined) return;
    if (m.accepted === true) g.sink.onAccepted?.();
    if (m.timings !== undefined) g.sink.onTimings?.(m.timings);
    if (m.output !== undefined) {
      // The last output of its last sequence ends the request here (no abort is sent after it).
      if (m.output.finishReason !== undefined && --g.left <= 0) this.gens.delete(m.id);
      g.sink.onOutput(m.output);
    }
    if (m.error !== undefined) {
      this.gens.delete(m.id);
      g.sink.onError(m.error.status, m.error.message);
    }
  }

  close(): void {
    clearInterval(this.timer);
  }

  private scanCancelled(): void {
    for (const [id, job] of this.jobs) {
      if (job.cancelled?.() === true) {
        this.jobs.delete(id);
        this.send({ type: 'tsserve.front.cancel', id });
        job.done({
          status: 503,
          body: {
            code: 503,
            type: 'ServiceUnavailableException',
            message: 'client closed the connection before the request was served',
          },
          queueUs: 0,
        });
      }
    }
  }
}

/**
 * What every proxy shares: the primary's last snapshot of the model (config, workers) and the
 * lifecycle a front cannot drive (models start, scale and stop on the primary).
 */
export abstract class RemoteModel {
  constructor(
    public snapshot: ModelSnapshot,
    protected readonly link: PrimaryLink,
  ) {}

  get config(): ModelConfig {
    return this.snapshot.config;
  }
  describe(): ModelDescription {
    return this.snapshot.description;
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  scale(): Promise<void> {
    return Promise.reject(new Error('models are scaled on the primary (management API)'));
  }
  drain(): Promise<void> {
    return Promise.resolve();
  }
  stop(): Promise<void> {
    return Promise.resolve();
  }
}

/** Binds `ts_image_refused_total` of one model and reason (the front's shipped series). */
export type ImageRefusalBinder = (model: string, reason: string) => BoundSeries;

/** A batched model served by the primary. */
export class RemoteBatchedModel extends RemoteModel implements ServedModel {
  readonly kind = 'batch';
  readonly admitsRemotely = true;
  private decoder: { readonly config: ModelConfig; readonly decoder: ImageDecoder | undefined } | null = null;

  constructor(
    snapshot: ModelSnapshot,
    link: PrimaryLink,
    private readonly refusals?: ImageRefusalBinder,
  ) {
    super(snapshot, link);
  }

  /** An image model's bodies are decoded here in the front, as the primary decodes its own (rebuilt when its config changes). */
  get imageDecoder(): ImageDecoder | undefined {
    const config = this.snapshot.config;
    if (this.decoder?.config !== config) {
      const bind = this.refusals;
      const decoder =
        config.handler === 'image_classifier' && bind !== undefined
          ? new ImageDecoder(parseImageClassifierOptions(config.handlerOptions), (reason) => bind(config.name, reason))
          : undefined;
      this.decoder = { config, decoder };
    }
    return this.decoder.decoder;
  }

  submit(job: Job): SubmitResult {
    // The batcher's own rule for a refusal at once: no worker wanted. A worker being replaced is
    // not one (the primary queues the job until it is back); the table is up to 500 ms old, so
    // every other refusal (a full queue, a failed load) is the primary's, back as a 503 outcome.
    if (this.snapshot.description.minWorkers === 0) return 'unavailable';
    this.link.submit(this.snapshot.config.name, job);
    return 'queued';
  }
}

/** A generation model served by the primary. */
export class RemoteGenerationModel extends RemoteModel implements ServedModel, GenerationTarget {
  readonly kind = 'generate';
  private readonly loader: BackgroundVocab;

  /** `chatTemplate`: --chat-template's text (read once by the primary at start-up), which wins over the model's own. */
  constructor(snapshot: ModelSnapshot, link: PrimaryLink, chatTemplate?: string) {
    super(snapshot, link);
    this.loader = new BackgroundVocab(chatTemplate);
  }

  /** The model's tokenizer and chat template, loaded in this front from the model's directory. */
  get vocab(): ModelVocab {
    return this.loader.of(this.snapshot.config);
  }

  /** Settles once the vocabulary is loaded (undefined when it is): requests wait for it (frontend/generation/load-vocab.ts). */
  vocabLoaded(): Promise<void> | undefined {
    return this.loader.ready(this.snapshot.config);
  }

  get vocabSize(): number | undefined {
    return this.snapshot.vocabSize;
  }

  generate(req: GenerateRequest, sink: GenerationSink): GenerationHandle | GenerateRefused {
    // No check of the table's workers here: it is up to 500 ms old, and the primary's refusal
    // names the reason (a worker being replaced, a failed load, scaled to 0), as without fronts.
    const name = this.snapshot.config.name;
    const requestId = `${name}-${randomUUID()}`;
    const abort = this.link.generate(name, req, requestId, sink);
    return { requestId, abort, pending: true };
  }
}

/** A pipeline model served by the primary: spoken requests relayed, their text and audio streamed back. */
export class RemotePipelineModel extends RemoteModel implements ServedModel, SpeakingModel {
  readonly kind = 'pipeline';
  private readonly loader = new BackgroundVocab();

  get sampleRate(): number {
    return this.snapshot.speech?.sampleRate ?? 24000;
  }

  /** The thinker's vocabulary and chat template, loaded in this front from its directory. */
  get vocab(): ModelVocab {
    const src = this.thinkerSource();
    return src === null ? modelVocab(this.snapshot.speech?.thinkerEngine) : this.loader.of(src);
  }

  /** Settles once the thinker's vocabulary is loaded (undefined when it is). */
  vocabLoaded(): Promise<void> | undefined {
    const src = this.thinkerSource();
    return src === null ? undefined : this.loader.ready(src);
  }

  private thinkerSource(): { name: string; dir: string; engine: Readonly<Record<string, unknown>> | undefined } | null {
    const sp = this.snapshot.speech;
    return sp?.thinkerDir === undefined
      ? null
      : { name: this.snapshot.config.name, dir: sp.thinkerDir, engine: sp.thinkerEngine };
  }

  /** Listed by `GET /v1/models`, as on the primary. */
  get openaiListing(): { readonly maxModelLen: number } {
    return { maxModelLen: this.vocab.maxModelLen };
  }

  speak(req: SpeakRequest, sink: SpeakSink): SpeakHandle | { readonly status: number; readonly message: string } {
    // The primary's orchestrator names the stage without a replica (the table may be stale).
    const name = this.snapshot.config.name;
    const requestId = `${name}-${randomUUID()}`;
    const abort = this.link.speak(name, req, requestId, sink);
    return { requestId, abort, pending: true };
  }
}
