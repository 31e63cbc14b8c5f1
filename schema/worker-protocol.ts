/**
 * Control messages between the frontend and a forked worker (not metrics: those are in
 * `schema/ipc.ts`). Workers are forked with `serialization: 'advanced'`, so typed arrays and
 * Buffers cross the channel as bytes. Every message carries a `type` in the `tsserve.`
 * namespace so the frontend can route metrics, engine outputs and control apart.
 */
import type { MetricsMessage } from './ipc.js';
import type { MetricsConfig } from './types.js';
import type { AutoLabels } from './metrics-api.js';
import type { PipelineSpec } from './pipeline-config.js';
import type { GenSamplingParams } from './engine-ipc.js';
import type { TensorHead, TensorSettings } from './tensors.js';

export const WORKER_PROTOCOL_VERSION = 1;

/** A model's settings from its `model-config.yaml`, resolved by the frontend. */
export interface ModelConfig {
  readonly name: string;
  /** The model-config's `version:`, `1.0` when it has none (TorchServe's default). */
  readonly version: string;
  /** Absolute path of the model directory, inside the model store. */
  readonly dir: string;
  /** `onnx`, `generate`, or a path to a handler module relative to `dir`. */
  readonly handler: string;
  /** Model file relative to `dir` (e.g. `model.onnx`). */
  readonly modelFile: string;
  readonly batchSize: number;
  readonly maxBatchDelayMs: number;
  readonly minWorkers: number;
  readonly maxWorkers: number;
  readonly responseTimeoutSec: number;
  /** onnxruntime threads per worker (intraOpNumThreads). */
  readonly threads: number;
  /** Engine settings for `handler: generate`; free-form here, validated by the engine. */
  readonly engine?: Readonly<Record<string, unknown>>;
  /**
   * Default sampling params of a Hugging Face directory's generation_config.json (vLLM's
   * `--generation-config auto`): a request's own params win over them.
   */
  readonly samplingDefaults?: GenSamplingParams;
  /** Anything else the handler reads from model-config.yaml (`handlerOptions:`). */
  readonly handlerOptions?: Readonly<Record<string, unknown>>;
  /** The `tensors:` block of a built-in `onnx` model (padding, the batch's byte bound). */
  readonly tensors?: TensorSettings;
  /** The stages of a `handler: pipeline` model (run by the frontend's orchestrator, never by a worker). */
  readonly pipeline?: PipelineSpec<ModelConfig>;
}

/** First message to a worker: everything it needs; it never reads config files itself (a generation worker reads its model's tokenizer files, schema/text/tokenizer-files.ts). */
export interface InitMessage {
  readonly type: 'tsserve.init';
  readonly v: typeof WORKER_PROTOCOL_VERSION;
  /** e.g. `W-9000-mlp_1.0` style name, unique per worker incarnation. */
  readonly workerId: string;
  /** Index of this worker within its model (0-based); the `engine` label for generation. */
  readonly workerIndex: number;
  readonly model: ModelConfig;
  /** The frontend's validated config, with hidden metrics resolved (`resolveStability`). */
  readonly metrics: MetricsConfig;
  /** False when metrics are off (`--metrics-mode off`): the worker's cache is a no-op. Default true. */
  readonly metricsEnabled?: boolean;
  /** The labels the server fills in for this worker's series (`hostname` today). Default none. */
  readonly autoLabels?: AutoLabels;
}

/**
 * One request of a batch. `body` is the parsed JSON body of the HTTP request, or null when the
 * frontend decoded the input into the batch's `tensors`.
 */
export interface BatchRequest {
  readonly requestId: string;
  readonly body: unknown;
}

/**
 * The decoded input tensors of a batch's requests (models with the built-in onnx handler) in
 * one buffer, so they cross to the worker as one block of bytes: tensor j (counted across the
 * requests, in order) is `data[offsets[j] .. offsets[j + 1])`. Each distinct list of heads
 * crosses once: a batch's requests mostly share one (structured clone copies every object).
 */
export interface BatchTensors {
  /** The distinct head lists of the batch's requests (one, for a batch of one shape). */
  readonly kinds: readonly (readonly TensorHead[])[];
  /** Per request: its head list's index in `kinds`, or -1 for a request whose input is its JSON `body`. */
  readonly kindOf: Int32Array;
  readonly data: Uint8Array;
  readonly offsets: Uint32Array;
}

export interface BatchMessage {
  readonly type: 'tsserve.batch';
  readonly batchId: number;
  readonly requests: readonly BatchRequest[];
  /** Present when at least one request's input was decoded in the frontend. */
  readonly tensors?: BatchTensors;
}

/** Ask the worker to flush its metrics and exit 0. */
export interface ShutdownMessage {
  readonly type: 'tsserve.shutdown';
}

export type ToWorkerMessage = InitMessage | BatchMessage | ShutdownMessage;

export interface ReadyMessage {
  readonly type: 'tsserve.ready';
  readonly workerId: string;
  /** Wall time of the handler's initialize, measured in the worker. */
  readonly loadTimeMs: number;
}

export interface LoadFailedMessage {
  readonly type: 'tsserve.load_failed';
  readonly workerId: string;
  readonly error: string;
}

/** One response per request of the batch, in the batch's order. */
export type BatchResponse =
  | { readonly ok: true; readonly body: unknown }
  | { readonly ok: false; readonly status: number; readonly message: string };

export interface ResultMessage {
  readonly type: 'tsserve.result';
  readonly batchId: number;
  readonly responses: readonly BatchResponse[];
  /** Time spent in the handler for the whole batch, measured in the worker. */
  readonly handlerMs: number;
  /**
   * The worker's metrics flush at the end of the batch, carried in the result rather than sent
   * as a message of its own (one channel write and one wake-up of the frontend fewer a batch);
   * the frontend ingests it before it answers the batch's requests.
   */
  readonly metrics?: MetricsMessage;
}

/** Levels a worker may log at (the frontend's logger has the same names). */
export const WORKER_LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** One of `WORKER_LOG_LEVELS`. */
export type WorkerLogLevel = (typeof WORKER_LOG_LEVELS)[number];

/**
 * One diagnostic line from a worker. The frontend writes it through its logger, as a record
 * carrying the worker's `worker` and `model` bindings (workers never format log records).
 */
export interface LogMessage {
  readonly type: 'tsserve.log';
  readonly level: WorkerLogLevel;
  readonly msg: string;
}

export type FromWorkerMessage = ReadyMessage | LoadFailedMessage | ResultMessage | LogMessage;

/** True when `msg` looks like a control message from a worker (type is in our namespace). */
export function isFromWorkerMessage(msg: unknown): msg is FromWorkerMessage {
  if (typeof msg !== 'object' || msg === null) return false;
  const t = (msg as { type?: unknown }).type;
  return t === 'tsserve.ready' || t === 'tsserve.load_failed' || t === 'tsserve.result' || t === 'tsserve.log';
}
