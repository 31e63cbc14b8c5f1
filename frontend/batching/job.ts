/** One admitted inference request travelling through a model's queue. */
import type { RequestTensors } from '../../schema/tensors.js';

/** The answer to one job: HTTP status and JSON body. */
export interface JobOutcome {
  readonly status: number;
  readonly body: unknown;
  /** Time spent in the queue (admission → sent to a worker), µs; 0 when never sent. */
  readonly queueUs: number;
  /** Time the worker's handler took for the batch this job was in, µs (absent when it never ran). */
  readonly handlerUs?: number;
  /**
   * Set when the job was relayed by a front and the primary did not admit it: the front's route
   * answers and counts it as it does a refusal of its own model's `submit`.
   */
  readonly refused?: 'queue_full' | 'unavailable' | 'closed';
}

/** TorchServe's JSON error body. */
export interface ErrorBody {
  readonly code: number;
  readonly type: string;
  readonly message: string;
}

/** Builds TorchServe's `{code, type, message}` error outcome. */
export function errorOutcome(status: number, type: string, message: string, queueUs = 0): JobOutcome {
  const body: ErrorBody = { code: status, type, message };
  return { status, body, queueUs };
}

/** A request waiting for, or being served by, a worker. `done` is called exactly once. */
export interface Job {
  readonly requestId: string;
  readonly body: unknown;
  /** The input tensors decoded and checked in the frontend (built-in onnx models); `body` is then unused. */
  readonly input?: RequestTensors;
  /**
   * Jobs batch only with jobs of the same key (their tensors stack: same names, types and
   * shapes but for padded axes); absent is a key of its own.
   */
  readonly batchKey?: string;
  /** The bytes of `input`, counted against the model's batch byte bound. */
  readonly inputBytes?: number;
  /** `performance.now()` at admission. */
  readonly arrivalMs: number;
  readonly done: (outcome: JobOutcome) => void;
  /** True once the client has gone away: a queued job is then dropped instead of computed. */
  readonly cancelled?: () => boolean;
}
