/**
 * A `handler: generate` model: a worker pool whose workers run the engine core, addressed
 * directly (no batcher: the engine batches continuously). Engine step messages are routed here
 * by worker id; everything else goes on to the metrics ingest. Each READY worker is one engine,
 * labelled with the lowest free slot so a replaced worker keeps `engine="0"`.
 */
import { randomUUID } from 'crypto';
import { performance } from 'perf_hooks';
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import type { AutoLabels, BoundSeries } from '../../schema/metrics-api.js';
import { decodeFromGenWorkerMessage, isFromGenWorkerMessage } from '../../schema/engine-ipc.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { ModelKindContext } from '../models/model-kinds.js';
import type { ModelDescription, ServedModel } from '../models/served-model.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { CacheConfigInfo } from './engine-series.js';
import { cacheConfigOf } from './cache-config.js';
import { validateEngineArgs } from '../../schema/engine-args.js';
import type { GenerationSink } from './generation-engine.js';
import { GenerationEngine } from './generation-engine.js';
import type { StatLine } from './logging-stat-logger.js';
import type { StatLineSource } from './stat-log-ticker.js';
import type { ModelVocab } from './model-vocab.js';
import { loadModelVocab } from './load-vocab.js';
import { SleepControl } from './sleep-control.js';

/** One generation request as the OpenAI layer hands it over. */
export interface GenerateRequest {
  /** Text (the worker tokenizes it) or token ids (the engine takes them as they are). */
  readonly prompt: string | readonly number[];
  /** Sampling params; max_tokens is always set (the effective value is what the metrics observe). */
  readonly params: GenSamplingParams & { readonly max_tokens: number };
  /** Frontend `performance.now()` when the HTTP request arrived. */
  readonly arrivalMs: number;
  /** Run it on this engine (a pipeline's sticky replica); default: the least loaded one. */
  readonly engine?: number;
  /** The id to run it under (a front process names its relayed requests); default a fresh one. */
  readonly requestId?: string;
  /**
   * The W3C trace id of the HTTP request. The route notes it for this process's exemplars; a
   * front's proxy relays it, since the exemplars are recorded in the primary.
   */
  readonly traceId?: string;
  /**
   * One prompt of a completions request of several, started together by a target without
   * `admits` (a front's proxy): the primary admits them as a whole, as `admits` does, when the
   * first (index 0) arrives. A served model has checked `admits` already and ignores it.
   */
  readonly group?: { readonly size: number; readonly index: number };
}

/** A started request. */
export interface GenerationHandle {
  readonly requestId: string;
  /** Aborts it in the engine (a client that went away); its sequences finish with `abort`. */
  abort(): void;
  /**
   * Admission is not known yet (a front process relays the request to the primary): the sink's
   * `onAccepted` or `onError` (a refusal such as a full queue) follows, before any output.
   */
  readonly pending?: boolean;
}

/** Why a request could not start. */
export interface GenerateRefused {
  readonly status: number;
  readonly message: string;
}

/** Options beyond the model config. */
export interface GenerationModelOptions {
  readonly modelUrl: string;
  readonly loadedAtStartup: boolean;
  /** The periodic stat log this model's engines print to (joined at construction, left on stop). */
  readonly statLog?: { add(source: StatLineSource): void; remove(source: StatLineSource): void };
  /** The automatic labels of engine `index` (a pipeline stage's `{hostname, stage, replica}`); default the frontend's. */
  readonly autoLabelsFor?: (index: number) => AutoLabels;
  /** False with --disable-log-stats: engine series are no-ops (default true). */
  readonly statsEnabled?: boolean;
  /** True when the engines scan their logits for NaN (VLLM_COMPUTE_NANS_IN_LOGITS=1): corrupted_requests is registered. */
  readonly computeNansInLogits?: boolean;
  /** An engine came up or went away (a pipeline tracks its replicas). */
  readonly onEnginesChanged?: () => void;
  /** `--chat-template`'s text: the template of this model instead of its directory's. */
  readonly chatTemplate?: string;
}

/** Requests an engine holds by default: this many times its max_num_seqs. */
const ENGINE_QUEUE_FACTOR = 100;
/** The engine's max_num_seqs when the `engine:` block gives none (backend/engine/config.ts). */
const DEFAULT_MAX_NUM_SEQS = 32;

/** A served generation model. */
export class GenerationModel implements ServedModel, StatLineSource {
  readonly kind = 'generate';
  readonly cache: CacheConfigInfo;
  private readonly pool: WorkerPool;
  private readonly enginesById = new Map<string, GenerationEngine>();
  private configValue: ModelConfig;
  private closed = false;
  private readonly drainWaiters: (() => void)[] = [];
  private readonly warnedBad = new Set<string>();
  /** Engines a scale-down is retiring: they take no new request; each resolves once its last one ends. */
  private readonly retiring = new Map<string, () => void>();
  /** Requests one engine holds at most (running and waiting) before new ones get 503. */
  readonly capacity: number;
  /** `tsserve_requests_refused_total{reason="queue_full"}` of this model. */
  private readonly refused: BoundSeries;
  /** vLLM's dev-mode /sleep and /wake_up of this model. */
  readonly sleeper: SleepControl;

  constructor(
    config: ModelConfig,
    private readonly ctx: ModelKindContext,
    private readonly opts: GenerationModelOptions,
  ) {
    this.configValue = config;
    this.cache = cacheConfigOf(config.engine);
    // --job-queue-size per engine when given, else 100 × max_num_seqs (TorchServe's default is 100 × batchSize).
    const seqs = validateEngineArgs(config.engine ?? {}).args.maxNumSeqs;
    this.capacity =
      ctx.queueCapacity ?? ENGINE_QUEUE_FACTOR * (typeof seqs === 'number' && seqs > 0 ? seqs : DEFAULT_MAX_NUM_SEQS);
    this.refused = ctx.series.queueFullRefusals(config.name);
    this.sleeper = new SleepControl({
      name: () => this.configValue.name,
      inFlight: () => this.inFlight(),
      workers: () => ({ min: this.pool.minWorkers, max: this.pool.maxWorkers }),
      engines: () => this.engines(),
      scale: (min, max) => this.scale(min, max),
    });
    const base = ctx.poolDeps;
    this.pool = new WorkerPool(config, {
      ...base,
      onOtherMessage: (id, msg) => {
        if (isFromGenWorkerMessage(msg)) this.onEngineMessage(id, msg);
        else base.onOtherMessage(id, msg);
      },
      onWorkerLoaded: (id, ms) => {
        base.onWorkerLoaded(id, ms);
        this.engineUp(id);
      },
      onWorkerGone: (id) => {
        this.engineGone(id);
        base.onWorkerGone(id);
      },
      beforeRetire: (id) => this.retire(id),
    });
    opts.statLog?.add(this);
  }

  get config(): ModelConfig {
    return this.configValue;
  }

  /** The tokenizer and chat template loaded by `start()` (undefined before: model-vocab.ts's vocabOf falls back to the engine block). */
  vocab: ModelVocab | undefined;

  /** The model's vocabulary size from its `engine:` block (the keys the engine reads), if given. */
  get vocabSize(): number | undefined {
    const e = this.configValue.engine ?? {};
    for (const k of ['vocabSize', 'vocab_size']) {
      const v = e[k];
      if (typeof v === 'number' && Number.isInteger(v) && v > 0) return v;
    }
    return undefined;
  }

  /** The engines that are up, by label. */
  engines(): readonly GenerationEngine[] {
    return [...this.enginesById.values()].sort((a, b) => a.index - b.index);
  }

  private vocabLoading: Promise<void> | undefined;

  /** Undefined once the vocabulary is loaded (or before start); else a promise that settles when it is. */
  vocabLoaded(): Promise<void> | undefined {
    return this.vocab === undefined ? this.vocabLoading : undefined;
  }

  /** Loads the tokenizer and chat template (a load error names the file), then starts the workers. */
  async start(): Promise<void> {
    const loading = loadModelVocab(this.configValue, this.opts.chatTemplate);
    this.vocabLoading = loading.then(
      () => undefined,
      () => undefined,
    );
    this.vocab = await loading;
    await this.pool.start();
  }

  /** The stat lines of each engine (a SpecDecoding line too when it drafted), prefixed with the model name (starts each engine's next interval). */
  statLines(): StatLine[] {
    return this.engines().flatMap((e) =>
      e.logger.logLines().map((l) => ({ level: l.level, line: `[${this.configValue.name}] ${l.line}` })),
    );
  }

  /** Starts a request on the least loaded engine, or says why it cannot start. */
  generate(req: GenerateRequest, sink: GenerationSink): GenerationHandle | GenerateRefused {
    if (this.closed)
      return { status: 503, message: `model ${this.configValue.name} is being unregistered or the server is stopping` };
    let best: GenerationEngine | null = null;
    for (const [id, e] of this.enginesById) {
      if (this.retiring.has(id)) continue;
      if ((req.engine === undefined || e.index === req.engine) && (best === null || e.load < best.load)) best = e;
    }
    if (best === null) {
      return { status: 503, message: `model ${this.configValue.name} has no engine ready; ${this.whyNoEngine()}` };
    }
    const engine = best;
    if (engine.load >= this.capacity) {
      this.refused.record(1);
      return {
        status: 503,
        message: `model ${this.configValue.name} has ${engine.load} request${engine.load === 1 ? '' : 's'} in flight on its least loaded engine, the most one holds (--job-queue-size ${this.capacity}); retry later`,
      };
    }
    const requestId = req.requestId ?? `${this.configValue.name}-${randomUUID()}`;
    const wrapped: GenerationSink = {
      onOutput: (o) => {
        sink.onOutput(o);
        this.checkDrained();
      },
      onError: (s, m) => {
        sink.onError(s, m);
        this.checkDrained();
      },
      onTimings: (t) => sink.onTimings?.(t),
    };
    if (!engine.add(requestId, req.arrivalMs, req.prompt, req.params, wrapped)) {
      return { status: 503, message: `engine ${engine.index} of model ${this.configValue.name} is not reachable` };
    }
    return { requestId, abort: () => engine.abort(requestId) };
  }

  /** Requests the engines can still take before a 503: each engine's --job-queue-size less its load. */
  remainingCapacity(): number {
    let free = 0;
    for (const [id, e] of this.enginesById) if (!this.retiring.has(id)) free += Math.max(0, this.capacity - e.load);
    return free;
  }

  /**
   * Null when `n` more requests would all be admitted now (while any engine has room the least
   * loaded one does); else the 503 to answer instead, counted once. A request of several prompts
   * asks first, so it is refused as a whole before any prompt reaches an engine.
   */
  admits(n: number): GenerateRefused | null {
    const free = this.remainingCapacity();
    if (this.closed || n <= free) return null; // a closing model refuses in generate()
    this.refused.record(1);
    return {
      status: 503,
      message: `model ${this.configValue.name} can take ${free} more request${free === 1 ? '' : 's'} before its engines are full (--job-queue-size ${this.capacity} each), and this request has ${n} prompts; retry later`,
    };
  }

  describe(): ModelDescription {
    const c = this.configValue;
    const pending = this.inFlight();
    return {
      modelName: c.name,
      modelVersion: c.version,
      modelUrl: this.opts.modelUrl,
      handler: c.handler,
      kind: this.kind,
      minWorkers: this.pool.minWorkers,
      maxWorkers: this.pool.maxWorkers,
      batchSize: c.batchSize,
      maxBatchDelay: c.maxBatchDelayMs,
      responseTimeout: c.responseTimeoutSec,
      loadedAtStartup: this.opts.loadedAtStartup,
      workers: this.pool.workers(),
      jobQueueStatus: { remainingCapacity: this.remainingCapacity(), pendingRequests: pending },
      ...(this.pool.lastError !== null ? { lastWorkerError: this.pool.lastError } : {}),
    };
  }

  async scale(min: number, max: number): Promise<void> {
    this.configValue = { ...this.configValue, minWorkers: min, maxWorkers: Math.max(min, max) };
    await this.pool.scale(min, max);
  }

  /** Resolves once no request is in flight on any engine. */
  drain(): Promise<void> {
    if (this.inFlight() === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  async stop(): Promise<void> {
    this.closed = true;
    this.opts.statLog?.remove(this);
    await this.pool.stop();
    for (const id of [...this.enginesById.keys()]) this.engineGone(id);
  }

  /**
   * Scaled to 0 is the operator's to change; a failed load says why (retrying in a few seconds
   * would not help until the model is fixed); otherwise a worker is loading or being replaced.
   */
  private whyNoEngine(): string {
    if (this.sleeper.sleeping) return 'it is asleep (POST /wake_up wakes it)';
    if (this.pool.minWorkers === 0) return 'scale its workers with the management API';
    const failed = this.pool.unavailable ? this.pool.lastError : null;
    if (failed !== null) return `its worker failed to load and is retried with backoff (${failed})`;
    return 'its worker is starting or being replaced; retry in a few seconds';
  }

  private inFlight(): number {
    let n = 0;
    for (const e of this.enginesById.values()) n += e.load;
    return n;
  }

  private checkDrained(): void {
    if (this.drainWaiters.length > 0 && this.inFlight() === 0) for (const w of this.drainWaiters.splice(0)) w();
    // Called on every output: the loop only while a scale-down is retiring an engine.
    if (this.retiring.size > 0)
      for (const [id, done] of this.retiring) if ((this.enginesById.get(id)?.load ?? 0) === 0) done();
  }

  /**
   * A scale-down retires this engine's worker: new requests go to the others, and the worker is
   * stopped once the generations it holds have finished (a worker pool waits only for batches,
   * which an engine never has: it stopped at once, failing them as if it had crashed).
   */
  private retire(workerId: string): Promise<void> {
    return new Promise((resolve) => {
      this.retiring.set(workerId, resolve);
      this.checkDrained();
    });
  }

  private engineUp(workerId: string): void {
    const used = new Set([...this.enginesById.values()].map((e) => e.index));
    let index = 0;
    while (used.has(index)) index++;
    const post = (msg: object): boolean => this.pool.worker(workerId)?.post(msg) ?? false;
    this.enginesById.set(
      workerId,
      new GenerationEngine(
        workerId,
        index,
        this.configValue.name,
        this.ctx.metrics,
        this.cache,
        () => performance.now(),
        post,
        this.opts.autoLabelsFor?.(index),
        this.opts.statsEnabled ?? true,
        this.opts.computeNansInLogits ?? false,
      ),
    );
    this.opts.onEnginesChanged?.();
  }

  private engineGone(workerId: string): void {
    const e = this.enginesById.get(workerId);
    if (e === undefined) return;
    this.enginesById.delete(workerId);
    // A worker that died holding requests fails them with 500, as /predictions answers it, naming
    // it for the logs; a stopping model's workers exit on purpose (pool.stop() waits for them,
    // killing one still busy at the shutdown deadline), so theirs is 503: it may succeed later.
    const name = this.configValue.name;
    const retired = this.retiring.has(workerId);
    this.retiring.get(workerId)?.();
    this.retiring.delete(workerId);
    if (this.closed) e.fail(503, `model ${name} was stopped`);
    else if (retired)
      e.fail(
        503,
        `worker ${workerId} of model ${name} (engine ${e.index}) was retired by a scale-down before this request finished (within responseTimeout ${this.configValue.responseTimeoutSec} s); retry`,
      );
    else e.fail(500, `worker ${workerId} of model ${name} (engine ${e.index}) exited`);
    this.checkDrained();
    this.opts.onEnginesChanged?.();
  }

  private onEngineMessage(workerId: string, raw: unknown): void {
    const e = this.enginesById.get(workerId);
    const res = decodeFromGenWorkerMessage(raw);
    if (!res.ok) {
      if (!this.warnedBad.has(workerId)) {
        this.warnedBad.add(workerId);
        this.ctx.log('warn', `worker ${workerId}: dropping a malformed engine message (${res.problems.join('; ')})`);
      }
      return;
    }
    if (e === undefined) return; // before ready or after the engine was dropped
    if (res.msg.type === 'tsserve.gen.step') e.onStep(res.msg);
    else e.onError(res.msg);
  }
}
