/**
 * What a worker sent back that the frontend could not take as sent: counted per model in
 * `tsserve_worker_output_faults_total{reason}` and logged without flooding. A worker whose
 * handler answers every batch wrongly used to write one error line per batch into ts_log; now
 * the first fault of each kind is logged at once, the later ones at most once a minute with how
 * many were only counted in between (the counter has them all).
 */

import { LogThrottle } from '../../schema/log-throttle.js';

/** Why a worker's output was not taken as sent (the `reason` label). */
export type WorkerOutputFault =
  /** A batch result of the wrong shape or with too few responses: its requests are answered 500. */
  | 'malformed_result'
  /** Responses beyond the batch's requests (one per extra response): dropped, and the batch answered 500. */
  | 'extra_response'
  /** A result for a batch that is not in flight at this worker (never sent, or already answered): dropped. */
  | 'unknown_batch'
  /** A stdout/stderr line cut at MAX_WORKER_LINE_CHARS (the line itself says how much was dropped). */
  | 'log_line_truncated'
  /** A worker that exited with its IPC channel closed but its stdout/stderr held open (by a process it started) past STDIO_GRACE_MS. */
  | 'stdio_held';

/** Every reason, in the order the docs list them. */
export const WORKER_OUTPUT_FAULTS: readonly WorkerOutputFault[] = Object.freeze([
  'malformed_result',
  'extra_response',
  'unknown_batch',
  'log_line_truncated',
  'stdio_held',
]);

/** The self-metric counting them. */
export const WORKER_OUTPUT_FAULTS_METRIC = 'tsserve_worker_output_faults_total';

/** Least time between two logged faults of one kind from one worker, ms. */
export const FAULT_LOG_INTERVAL_MS = 60_000;

/** One worker's faults: counts every one, logs per kind the first then at most one a minute. */
export class OutputFaults {
  private readonly throttle: LogThrottle;

  constructor(
    /** Adds `n` to the model's counter for `reason`; never throws (a bound series). */
    private readonly count: (reason: WorkerOutputFault, n: number) => void,
    private readonly log: (msg: string) => void,
    /** Monotonic ms. */
    now: () => number,
  ) {
    this.throttle = new LogThrottle(FAULT_LOG_INTERVAL_MS, now);
  }

  /** Counts `n` faults of `reason` and logs `message` unless one of its kind was logged in the last minute. */
  report(reason: WorkerOutputFault, n: number, message: string): void {
    this.count(reason, n);
    const line = this.throttle.take(reason);
    if (line === null) return;
    if (line.first)
      this.log(
        `${message} (further ones are logged at most once a minute; all are counted in ${WORKER_OUTPUT_FAULTS_METRIC}{reason="${reason}"})`,
      );
    else
      this.log(
        line.suppressed === 0
          ? message
          : `${message} (${line.suppressed} more like it in the last ${line.sinceSec} s were only counted)`,
      );
  }

  /** Counts `n` faults of `reason` that need no log line of their own (a truncated line says so itself). */
  countOnly(reason: WorkerOutputFault, n = 1): void {
    this.count(reason, n);
  }
}
