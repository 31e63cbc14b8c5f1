/**
 * Which failed batches the worker writes to its log. A handler that throws on every batch used
 * to write its stack once a batch — at a few thousand batches a second, that is the whole of
 * ts_log. The requests are answered and counted anyway (their 500s in the frontend's request
 * counters); the log is for finding the bug. So each distinct failure (its first line) is logged
 * with its stack the first time, then at most once a minute with how many were not.
 */
import { LogThrottle } from '../../schema/log-throttle.js';

/** Least time between two log lines of one failure, ms. */
export const BATCH_FAILURE_LOG_INTERVAL_MS = 60_000;

/** Distinct failures tracked; past it, new ones share one budget (a message naming each request's data would grow the table without end). */
export const MAX_TRACKED_FAILURES = 100;

/** Rate-limits the worker's "batch N failed" lines per failure. */
export class BatchFailureLog {
  private readonly throttle: LogThrottle;

  constructor(
    private readonly log: (line: string) => void,
    /** Monotonic ms. */
    now: () => number,
  ) {
    this.throttle = new LogThrottle(BATCH_FAILURE_LOG_INTERVAL_MS, now, MAX_TRACKED_FAILURES);
  }

  /** Logs (or only tallies) batch `batchId`'s failure `err`. */
  report(batchId: unknown, err: unknown): void {
    const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
    const first = err instanceof Error ? `${err.name}: ${err.message}` : detail;
    const line = this.throttle.take(first.split('\n', 1)[0]!);
    if (line === null) return;
    const n = line.suppressed;
    const more =
      n === 0
        ? ''
        : ` (${n} more ${n === 1 ? 'batch' : 'batches'} failed like it in the last ${line.sinceSec} s; their requests were answered with the error)`;
    this.log(`batch ${String(batchId)} failed: ${detail}${more}`);
  }
}
