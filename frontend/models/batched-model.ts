/** A handler-driven model (`onnx` or a handler module): a worker pool behind a batcher. */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { BatchDebugLog } from '../batching/batch-debug-log.js';
import type { BatchDone } from '../batching/batch-debug-log.js';
import { Batcher } from '../batching/batcher.js';
import { DEFAULT_MAX_BATCH_BYTES } from '../../schema/tensors.js';
import { REAL_CLOCK } from '../batching/clock.js';
import type { Clock } from '../batching/clock.js';
import type { Log } from '../log/log.js';
import type { SubmitResult } from '../batching/batcher.js';
import type { Job } from '../batching/job.js';
import { WorkerPool } from '../workers/worker-pool.js';
import type { WorkerPoolDeps } from '../workers/worker-pool.js';
import type { FrontendSeries } from './frontend-series.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import type { ModelDescription, ServedModel } from './served-model.js';
import { ImageDecoder } from '../image/image-decoder.js';
import { parseImageClassifierOptions } from '../../schema/image/classifier-options.js';

/** The batch listener writing `model`'s debug lines through `log`. */
function debugBatches(model: string, log: Log, clock: Clock): (b: BatchDone) => void {
  const lines = new BatchDebugLog(model, (l) => log.debug(l), clock);
  return (b) => lines.batch(b);
}

/** Options beyond the model config. */
export interface BatchedModelOptions {
  readonly pool: WorkerPoolDeps;
  readonly series: FrontendSeries;
  /** Queue bound in requests; default 100 × batchSize. */
  readonly queueCapacity?: number;
  readonly modelUrl: string;
  readonly loadedAtStartup: boolean;
  /** The batcher's time and timers (default the real clock). */
  readonly clock?: Clock;
}

/** Pool + batcher for one model, recording QueueTime and WorkerThreadTime per batch. */
export class BatchedModel implements ServedModel {
  readonly kind = 'batch';
  private readonly pool: WorkerPool;
  private readonly batcher: Batcher;
  private configValue: ModelConfig;
  /** `tsserve_requests_refused_total{reason="queue_full"}` of this model. */
  private readonly refused: BoundSeries;
  readonly imageDecoder?: ImageDecoder;

  constructor(
    config: ModelConfig,
    private readonly opts: BatchedModelOptions,
  ) {
    this.configValue = config;
    this.refused = opts.series.queueFullRefusals(config.name);
    if (config.handler === 'image_classifier')
      this.imageDecoder = new ImageDecoder(parseImageClassifierOptions(config.handlerOptions), (reason) =>
        opts.series.bind('ts_image_refused_total', { model_name: config.name, reason }),
      );
    this.pool = new WorkerPool(config, opts.pool);
    this.batcher = new Batcher(
      this.pool,
      {
        batchSize: config.batchSize,
        maxBatchDelayMs: config.maxBatchDelayMs,
        responseTimeoutSec: config.responseTimeoutSec,
        queueCapacity: opts.queueCapacity ?? 100 * config.batchSize,
        maxBatchBytes: config.tensors?.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES,
      },
      (queueMs, workerThreadMs) => {
        opts.series.queueTime.record(queueMs);
        opts.series.workerThreadTime.record(workerThreadMs);
      },
      opts.clock,
      (err) =>
        opts.pool.log.error(
          `model ${config.name}: answering a request failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
        ),
      // `--log-level debug`: a line per answered batch, at most 10 a second (batch-debug-log.ts).
      opts.pool.log.isLevelEnabled('debug') ? debugBatches(config.name, opts.pool.log, opts.clock ?? REAL_CLOCK) : null,
    );
  }

  get config(): ModelConfig {
    return this.configValue;
  }

  start(): Promise<void> {
    return this.pool.start();
  }

  submit(job: Job): SubmitResult {
    const r = this.batcher.submit(job);
    if (r === 'queue_full') this.refused.record(1);
    return r;
  }

  describe(): ModelDescription {
    const c = this.configValue;
    return {
      modelName: c.name,
      modelVersion: c.version,
      modelUrl: this.opts.modelUrl,
      handler: c.handler,
      kind: this.kind,
      minWorkers: this.pool.minWorkers,
      maxWorkers: this.pool.maxWorkers,
      batchSize: this.batcher.batchSize,
      maxBatchDelay: this.batcher.maxBatchDelayMs,
      responseTimeout: c.responseTimeoutSec,
      loadedAtStartup: this.opts.loadedAtStartup,
      workers: this.pool.workers(),
      jobQueueStatus: {
        remainingCapacity: this.batcher.capacity - this.batcher.queueLength,
        pendingRequests: this.batcher.queueLength,
      },
      ...(this.pool.lastError !== null ? { lastWorkerError: this.pool.lastError } : {}),
    };
  }

  async scale(min: number, max: number): Promise<void> {
    this.configValue = { ...this.configValue, minWorkers: min, maxWorkers: Math.max(min, max) };
    const scaling = this.pool.scale(min, max);
    // Scaled to 0, no worker will take what is queued: answer it now, not at its responseTimeout.
    // (Not `pool.unavailable`: that is also a pool whose workers failed to load, which this
    // scale may be retrying, and its queue was not scaled to 0.)
    if (min === 0)
      this.batcher.refuseQueued(
        `Model "${this.configValue.name}" was scaled to 0 workers while this request waited; scale it up with the management API`,
      );
    await scaling;
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }

  async stop(): Promise<void> {
    this.batcher.close(`model ${this.configValue.name} is being unregistered or the server is stopping`);
    await this.pool.whenIdle();
    await this.pool.stop();
  }
}
