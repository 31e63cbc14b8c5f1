/**
 * What a worker needs from its process (`main.ts` gives it `process.send`), in its own file so
 * the worker and the loops it hands a process to (`generation.ts`, `vocoder.ts`) share it
 * without importing each other.
 */
import type { FromWorkerMessage, WorkerLogLevel } from '../../schema/worker-protocol.js';
import type { MetricsMessage } from '../../schema/ipc.js';

/** What the worker needs from its process. */
export interface WorkerIo {
  /**
   * Sends one message to the frontend (control or metrics); `onWritten` runs once it is handed
   * to the channel. Returns false when the channel's backlog is full (`process.send`'s answer).
   */
  send(msg: FromWorkerMessage | MetricsMessage, onWritten?: () => void): boolean | void;
  /** Ends the worker after everything sent has been handed to the channel. */
  exit(code: number): void;
  /** Diagnostics: the frontend logs them with this worker's `worker` and `model` bindings. */
  log(level: WorkerLogLevel, line: string): void;
}
