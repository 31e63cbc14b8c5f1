/**
 * Which failed batches the worker writes to its log. A handler that throws on every batch used
 * to write its stack once a batch — at a few thousand batches a second, that is the whole of
 * ts_log. The requests are answered and counted anyway (their 500s in the frontend's request
 * counters); the log is for finding the bug. So each distinct failure (its first line) is logged
 * with its stack the first time, then at most once a minute with how many were not.
 */

/** Least time between two log lines of one failure, ms. */
export const BATCH_FAILURE_LOG_INTERVAL_MS = 60_000;

/** Distinct failures tracked; past it, new ones share one budget (a message naming each request's data would grow the map without end). */
export const MAX_TRACKED_FAILURES = 100;

const OTHER = '\u0000other';

interface FailureState {
  lastLoggedMs: number;
  suppressed: number;
}

/** Rate-limits the worker's "batch N failed" lines per failure. */
export class BatchFailureLog {
  private readonly seen = new Map<string, FailureState>();

  constructor(
    private readonly log: (line: string) => void,
    /** Monotonic ms. */
    private readonly now: () => number,
  ) {}

  /** Logs (or only tallies) batch `batchId`'s failure `err`. */
  report(batchId: unknown, err: unknown): void {
    const detail = err instanceof Error ? (err.stack ?? err.message) : String(err);
    const first = err instanceof Error ? `${err.name}: ${err.message}` : detail;
    let key = first.split('\n', 1)[0]!;
    if (!this.seen.has(key) && this.seen.size >= MAX_TRACKED_FAILURES) key = OTHER;
    const now = this.now();
    const s = this.seen.get(key);
    if (s === undefined) {
      this.seen.set(key, { lastLoggedMs: now, suppressed: 0 });
      this.log(`batch ${String(batchId)} failed: ${detail}`);
      return;
    }
    if (now - s.lastLoggedMs < BATCH_FAILURE_LOG_INTERVAL_MS) {
      s.suppressed++;
      return;
    }
    const more = s.suppressed === 0 ? '' : ` (${s.suppressed} more ${s.suppressed === 1 ? 'batch' : 'batches'} failed like it in the last ${Math.round((now - s.lastLoggedMs) / 1000)} s; their requests were answered with the error)`;
    this.log(`batch ${String(batchId)} failed: ${detail}${more}`);
    s.lastLoggedMs = now;
    s.suppressed = 0;
  }
}
