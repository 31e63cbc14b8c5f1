/** What the server knows about a registered model, whatever kind of workers it runs. */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { Job } from '../batching/job.js';
import type { SubmitResult } from '../batching/batcher.js';
import type { WorkerInfo } from '../workers/worker-pool.js';
import type { ImageDecoder } from '../image/image-decoder.js';

/** One stage of a pipeline model: the stage's model and its workers, each with its replica index. */
export interface StageDescription {
  readonly stage: string;
  readonly model: string;
  readonly replicas: number;
  readonly workers: ReadonlyArray<WorkerInfo & { readonly replica: number | null }>;
}

/** The management API's view of a model (TorchServe's describe-model fields). */
export interface ModelDescription {
  readonly modelName: string;
  readonly modelVersion: string;
  readonly modelUrl: string;
  readonly handler: string;
  readonly kind: string;
  readonly minWorkers: number;
  readonly maxWorkers: number;
  readonly batchSize: number;
  readonly maxBatchDelay: number;
  readonly responseTimeout: number;
  readonly loadedAtStartup: boolean;
  readonly workers: readonly WorkerInfo[];
  readonly jobQueueStatus: { readonly remainingCapacity: number; readonly pendingRequests: number };
  /**
   * Why the model's last worker load failed or its last worker died, since a worker last loaded
   * (absent when none did): the describe otherwise showed `workers: []` and no reason.
   */
  readonly lastWorkerError?: string;
  /** A pipeline model's stages, in order (absent for other kinds): which worker serves which replica. */
  readonly stages?: readonly StageDescription[];
}

/** A registered model. `submit` is absent for kinds that do not serve `/predictions`. */
export interface ServedModel {
  readonly config: ModelConfig;
  /** `batch` for handler-driven models; other kinds name themselves (`ModelKind`, models/model-kinds.ts). */
  readonly kind: string;
  /**
   * Set by a kind whose model answers on the OpenAI routes without being a generation model (a
   * pipeline's spoken chat): `GET /v1/models` lists it with this context length.
   */
  readonly openaiListing?: {
    readonly maxModelLen: number;
    /** The one OpenAI route it answers (refusals on the others name it); default `/v1/chat/completions`. */
    readonly answers?: string;
  };
  /** Starts the initial workers; resolves when each is ready or has failed. */
  start(): Promise<void>;
  submit?(job: Job): SubmitResult;
  /** Set for a `handler: image_classifier` model: `/predictions` bodies are images, decoded here before they are submitted. */
  readonly imageDecoder?: ImageDecoder;
  /**
   * Set by a front's proxy: its `submit` says 'queued' once the job is sent, and the primary
   * admits it there; the outcome carries `refused` when it did not. A route counts such a
   * request when its admitted outcome comes back, not at `submit`.
   */
  readonly admitsRemotely?: boolean;
  describe(): ModelDescription;
  /** Scales to `min` workers; resolves when done. */
  scale(min: number, max: number): Promise<void>;
  /** Set by a kind that cannot be scaled through the management API: why (answered 400 at once). */
  readonly notScalable?: string;
  /** Waits until nothing is queued or in flight. */
  drain(): Promise<void>;
  /** Stops admitting, answers what is queued with 503, stops the workers (each flushes). */
  stop(): Promise<void>;
}
