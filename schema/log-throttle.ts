/**
 * How often a repeated problem is written to a log: the first of each kind at once, then at most
 * one per interval with how many were only counted in between. Shared by the frontend's worker
 * output faults and the workers' failed-batch lines, so a handler that fails every batch (or a
 * worker that answers every batch wrongly) does not fill ts_log; the counters keep every one.
 */

/** What to write for one occurrence: null to only count it. */
export interface ThrottledLine {
  /** The first occurrence of its kind (nothing was suppressed before it). */
  readonly first: boolean;
  /** Occurrences of the kind only counted since the last line written. */
  readonly suppressed: number;
  /** Seconds since the last line written of the kind (0 for the first). */
  readonly sinceSec: number;
}

/** Occurrences past `maxKinds` distinct kinds share this one's budget. */
const OTHER = '\u0000other';

/** Per-kind log throttle; at most `maxKinds` kinds are tracked (a message naming request data must not grow the table). */
export class LogThrottle {
  private readonly kinds = new Map<string, { lastMs: number; suppressed: number }>();

  constructor(
    readonly intervalMs: number,
    /** Monotonic ms. */
    private readonly now: () => number,
    private readonly maxKinds = 100,
  ) {}

  /** Whether (and how) to write occurrence of `kind` now. */
  take(kind: string): ThrottledLine | null {
    const key = this.kinds.has(kind) || this.kinds.size < this.maxKinds ? kind : OTHER;
    const now = this.now();
    const k = this.kinds.get(key);
    if (k === undefined) {
      this.kinds.set(key, { lastMs: now, suppressed: 0 });
      return { first: true, suppressed: 0, sinceSec: 0 };
    }
    if (now - k.lastMs < this.intervalMs) {
      k.suppressed++;
      return null;
    }
    const line = { first: false, suppressed: k.suppressed, sinceSec: Math.round((now - k.lastMs) / 1000) };
    k.lastMs = now;
    k.suppressed = 0;
    return line;
  }
}
