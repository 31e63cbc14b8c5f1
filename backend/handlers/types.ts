/**
 * The handler contract, TorchServe's in TypeScript. A handler module exports either the four
 * stages — `initialize(context)`, `preprocess(requests, context)`, `inference(batch, context)`,
 * `postprocess(output, context)`, each possibly async — or one `handle(requests, context)` (also
 * accepted as the default export). The worker times `inference` as PredictionTime and the
 * whole pipeline as HandlerTime. A handler file may import only these types (erased at compile
 * time) and Node built-ins: everything else — metrics, ONNX sessions — comes from `context`.
 */
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { OrtSession, OrtTensorInput, OrtTensorOutput } from '../onnx/ort.js';
import type { WorkerMetricsApi } from '../metrics/worker-metrics-api.js';
import type { RequestTensors } from '../../schema/tensors.js';

/** One request of a batch: the id the frontend gave it and its parsed JSON body. */
export interface HandlerRequest {
  readonly requestId: string;
  readonly body: unknown;
  /**
   * The input tensors, decoded and checked against the graph by the frontend (then `body` is
   * null). Only the built-in `onnx` handler's requests carry them; a user handler gets `body`.
   */
  readonly tensors?: RequestTensors;
}

/** A tensor handed to `session.run`: a typed array and its shape (no onnxruntime import needed). */
export type HandlerTensor = OrtTensorInput;
/** A tensor returned by `session.run`. */
export type HandlerTensorOutput = OrtTensorOutput;

/** An ONNX session opened through `context.createSession`; the worker releases it at exit. */
export type HandlerSession = Omit<OrtSession, 'release'>;

/** The metrics cache a handler records through (TorchServe's `context.metrics`). */
export type HandlerMetrics = WorkerMetricsApi;

/** What every stage receives. `requestIds` is the current batch's ids (empty in initialize). */
export interface HandlerContext {
  readonly metrics: HandlerMetrics;
  readonly modelName: string;
  /** Absolute, symlink-resolved path of the model directory. */
  readonly modelDir: string;
  /** The model's resolved model-config (TorchServe's manifest). */
  readonly manifest: ModelConfig;
  readonly requestIds: readonly string[];
  /** `handlerOptions:` from model-config.yaml, `{}` when absent. */
  readonly handlerOptions: Readonly<Record<string, unknown>>;
  /**
   * Opens an ONNX model; `file` is relative to the model directory and must stay inside it.
   * Uses the model-config's `threads`.
   */
  createSession(file: string): Promise<HandlerSession>;
  /**
   * Builds the error that marks one request as failed: return it in that request's slot of
   * the output (the rest of the batch still succeeds), or throw it to fail the whole batch.
   * `status` is an HTTP status (400 for a bad input; default 400).
   */
  requestError(message: string, status?: number): Error;
}

type MaybePromise<T> = T | Promise<T>;

/** A staged handler (TorchServe's BaseHandler shape). Omitted stages pass data through. */
export interface StagedHandler {
  initialize?(context: HandlerContext): MaybePromise<void>;
  preprocess?(requests: readonly HandlerRequest[], context: HandlerContext): MaybePromise<unknown>;
  inference?(batch: unknown, context: HandlerContext): MaybePromise<unknown>;
  /** Must return one entry per request, in order: a JSON-able body, or a `requestError`. */
  postprocess?(output: unknown, context: HandlerContext): MaybePromise<readonly unknown[]>;
}

/** A single-function handler: one entry per request, like `postprocess`. */
export type HandleFunction = (
  requests: readonly HandlerRequest[],
  context: HandlerContext,
) => MaybePromise<readonly unknown[]>;

/** What a handler module may export. */
export interface HandlerModule extends StagedHandler {
  handle?: HandleFunction;
  default?: HandleFunction | StagedHandler;
}
