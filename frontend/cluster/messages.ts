/**
 * What the primary and its front processes (`--api-server-count N`) say to each other over the
 * cluster IPC channel (advanced serialization: typed arrays cross as bytes, not JSON). Every
 * type is namespaced `tsserve.front.*`, so a stray message is recognised and ignored.
 */
import type { RequestTensors } from '../../schema/tensors.js';
import type { MetricSpec } from '../../schema/types.js';
import type { MetricsMessage } from '../../schema/ipc.js';
import type { GenSamplingParams, GenRequestOutput } from '../../schema/engine-ipc.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { BodyLimits } from '../models/body-limits.js';
import type { AccessRecord, LogLevel } from '../log/log.js';
import type { ModelDescription } from '../models/served-model.js';
import type { HealthReport } from '../models/health.js';
import type { ForeignFamily } from '../metrics/exposition/foreign-family.js';
import type { JobOutcome } from '../batching/job.js';
import type { RequestTimings } from '../generation/engine-stats.js';
import type { SpeakResult } from '../pipeline/speak.js';

/** One registered model as the fronts see it. */
export interface ModelSnapshot {
  readonly kind: string;
  readonly config: ModelConfig;
  readonly description: ModelDescription;
  /** Generation models: the vocabulary size the OpenAI layer checks prompts against. */
  readonly vocabSize?: number;
  /** Pipeline models: the audio's sample rate, the thinker's `engine:` block and directory (its vocabulary and chat template). */
  readonly speech?: {
    readonly sampleRate: number;
    readonly thinkerEngine?: Readonly<Record<string, unknown>>;
    readonly thinkerDir?: string;
  };
}

/** Primary → front: everything a front needs to serve (sent once, after it is forked). */
export interface FrontInit {
  readonly type: 'tsserve.front.init';
  readonly host: string;
  readonly port: number;
  readonly maxRequestSizeBytes: number;
  readonly bodyLimits: BodyLimits;
  readonly headerTimeoutMs: number;
  readonly token?: string;
  /** The frontend metrics the primary records (missing = switched off in metrics.yaml). */
  readonly metrics: readonly MetricSpec[];
  /** Process metrics wanted (prometheus mode on). */
  readonly processMetrics: boolean;
  /** The primary's limits.max_points_per_flush: a front's flushes are capped as a worker's are. */
  readonly maxPointsPerFlush?: number;
  readonly models: readonly ModelSnapshot[];
  readonly health: HealthReport;
  /** --chat-template's text (the primary read the file once at start-up): the generation models' template. */
  readonly chatTemplate?: string;
}

/** Primary → fronts: the model table changed (or the periodic refresh). */
export interface FrontModels {
  readonly type: 'tsserve.front.models';
  readonly models: readonly ModelSnapshot[];
  readonly health: HealthReport;
}

/** Primary → front: an inference job is done. */
export interface FrontJobDone {
  readonly type: 'tsserve.front.done';
  readonly id: number;
  readonly outcome: JobOutcome;
}

/**
 * Primary → front: the jobs answered in one turn of the primary's event loop, together: one
 * message (one wake-up of the front) for a batch's answers instead of one per request.
 */
export interface FrontJobsDone {
  readonly type: 'tsserve.front.dones';
  readonly done: readonly FrontJobDone[];
}

/** Primary → front: one event of a generation request. */
export interface FrontGenEvent {
  readonly type: 'tsserve.front.gen';
  readonly id: number;
  readonly output?: GenRequestOutput;
  readonly timings?: RequestTimings;
  readonly error?: { readonly status: number; readonly message: string };
  /** The engine admitted the request (sent first, so the front can answer a refusal with its status). */
  readonly accepted?: true;
}

/** Primary → front: one event of a spoken (pipeline) request; `done` and `error` end it. */
export interface FrontSpeechEvent {
  readonly type: 'tsserve.front.speech';
  readonly id: number;
  readonly text?: string;
  /** One chunk of mono PCM16 (crosses as bytes). */
  readonly audio?: Uint8Array;
  readonly done?: SpeakResult;
  readonly error?: { readonly status: number; readonly message: string };
  /** The pipeline admitted the request (sent first, so the front can answer a refusal with its status). */
  readonly accepted?: true;
}

/** Primary → front: stop admitting (503, as the primary's own drain), or close and exit. */
export interface FrontControl {
  readonly type: 'tsserve.front.drain' | 'tsserve.front.stop';
}

/** Primary → front: send your process metrics (answered with `FrontProcessMetrics`). */
export interface FrontScrape {
  readonly type: 'tsserve.front.scrape';
  readonly id: number;
}

/**
 * Primary → front: a heartbeat (every 5 s from the front's hello); a front that leaves three in
 * a row unanswered has a blocked event loop and is killed.
 */
export interface FrontPing {
  readonly type: 'tsserve.front.ping';
  readonly seq: number;
}

/** Front → primary: the answer to ping `seq`, sent from the front's event loop. */
export interface FrontPong {
  readonly type: 'tsserve.front.pong';
  readonly seq: number;
}

/** Front → primary: listening on the shared port. */
export interface FrontListening {
  readonly type: 'tsserve.front.listening';
  readonly port: number;
}

/** Front → primary: its listener could not bind (it exits next); the start fails with this. */
export interface FrontListenFailed {
  readonly type: 'tsserve.front.listen-failed';
  readonly code?: string;
  readonly message: string;
}

/** Front → primary: its message listener is up (an init sent before it would be lost). */
export interface FrontHello {
  readonly type: 'tsserve.front.hello';
}

/** Front → primary: its last flush is sent; it exits now. */
export interface FrontStopped {
  readonly type: 'tsserve.front.stopped';
}

/** Front → primary: one inference job (a /predictions body or one OIP row). */
export interface FrontJob {
  readonly type: 'tsserve.front.job';
  readonly id: number;
  readonly model: string;
  readonly requestId: string;
  readonly body: unknown;
  /** The tensors the front decoded (a built-in onnx model), with the job's batch key and bytes. */
  readonly input?: RequestTensors;
  readonly batchKey?: string;
  readonly inputBytes?: number;
  /** Arrival as epoch ms (performance.timeOrigin + now): each process has its own time origin. */
  readonly arrivalEpochMs: number;
  /** The W3C trace id the request came with: the primary's exemplars carry it. */
  readonly traceId?: string;
}

/** Front → primary: the jobs read in one turn of the front's event loop, together. */
export interface FrontJobs {
  readonly type: 'tsserve.front.jobs';
  readonly jobs: readonly FrontJob[];
}

/** Front → primary: the client of job, generation or spoken request `id` went away. */
export interface FrontCancel {
  readonly type: 'tsserve.front.cancel';
  readonly id: number;
}

/** Front → primary: one generation request. */
export interface FrontGenerate {
  readonly type: 'tsserve.front.generate';
  readonly id: number;
  readonly model: string;
  readonly requestId: string;
  readonly prompt: string | readonly number[];
  readonly params: GenSamplingParams & { readonly max_tokens: number };
  readonly arrivalEpochMs: number;
  /** The W3C trace id the request came with: the primary's exemplars carry it. */
  readonly traceId?: string;
  /** One prompt of a request of several, sent together: admitted as a whole when index 0 arrives. */
  readonly group?: { readonly size: number; readonly index: number };
}

/**
 * Front → primary: one spoken request for a pipeline model (chat with audio, or
 * `/v1/audio/speech`): a generation request's fields, and how the audio comes back.
 */
export interface FrontSpeak extends Omit<FrontGenerate, 'type'> {
  readonly type: 'tsserve.front.speak';
  readonly streamed: boolean;
  /** `/v1/audio/speech`: the codec tokens, fed straight to code2wav. */
  readonly codes?: readonly number[];
}

/**
 * Front → primary: what the front recorded since its last flush, as a worker ships it (the same
 * `MetricsMessage`, folded in by the same ingest; null when only records and lines are due),
 * with the access records and log lines the primary writes.
 */
export interface FrontMetrics {
  readonly type: 'tsserve.front.metrics';
  readonly metrics: MetricsMessage | null;
  readonly access: readonly AccessRecord[];
  readonly logs: readonly (readonly [LogLevel, string])[];
}

/** Front → primary: the answer to a scrape. */
export interface FrontProcessMetrics {
  readonly type: 'tsserve.front.process';
  readonly id: number;
  readonly families: readonly ForeignFamily[];
}

/** Any message from the primary. */
export type ToFront =
  | FrontInit
  | FrontModels
  | FrontJobDone
  | FrontJobsDone
  | FrontGenEvent
  | FrontSpeechEvent
  | FrontControl
  | FrontScrape
  | FrontPing;
/** Any message from a front. */
export type FromFront =
  | FrontHello
  | FrontListening
  | FrontListenFailed
  | FrontStopped
  | FrontJob
  | FrontJobs
  | FrontCancel
  | FrontGenerate
  | FrontSpeak
  | FrontMetrics
  | FrontProcessMetrics
  | FrontPong;

/** True for a message of this protocol (either direction). */
export function isFrontMessage(msg: unknown): msg is { readonly type: string } {
  return (
    typeof msg === 'object' &&
    msg !== null &&
    typeof (msg as { type?: unknown }).type === 'string' &&
    (msg as { type: string }).type.startsWith('tsserve.front.')
  );
}
