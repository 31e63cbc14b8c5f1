/**
 * The worker's drop ledger: every datapoint the cache refuses is counted here by reason (a
 * running total for the handler, a delta for the next flush), with one warning per (metric,
 * reason), and every fold into a metric's overflow series is counted for the next flush.
 */
import type { DropReason } from '../metrics-api.js';
import { clip } from '../shown.js';

/** Most distinct (metric, reason) pairs warned about, and no-op metrics kept; later ones are only counted. */
export const MAX_WARNED = 1000;

/** The counts a flush carries, taken (and reset) at once. */
export interface LedgerDeltas {
  readonly dropped: Partial<Record<DropReason, number>>;
  readonly overflowed: Record<string, number>;
}

/** Drop and overflow counts of one worker cache, with bounded once-only warnings. */
export class DropLedger {
  /** Datapoints dropped since start, by reason (cumulative). */
  readonly totals: Record<string, number> = {};
  private readonly warned = new Set<string>();
  private delta: Partial<Record<DropReason, number>> = {};
  private deltaCount = 0;
  private overflowDelta: Record<string, number> = {};
  private overflowCount = 0;

  constructor(private readonly log: (msg: string) => void) {}

  /** Whether a flush has counts to carry. */
  get pending(): boolean {
    return this.deltaCount !== 0 || this.overflowCount !== 0;
  }

  /** Counts a drop; warns once per (metric, reason), for at most MAX_WARNED pairs. */
  drop(reason: DropReason, metric: string, detail: string | (() => string)): void {
    this.totals[reason] = (this.totals[reason] ?? 0) + 1;
    this.delta[reason] = (this.delta[reason] ?? 0) + 1;
    this.deltaCount++;
    this.warnOnce(reason, metric, () => {
      const what = metric === '' ? 'Dropped a datapoint' : `Failed to update metric with name:${clip(metric)}`;
      return `[METRICS]${what}: ${typeof detail === 'string' ? detail : detail()} (${reason}; further drops of this kind are counted, not logged)`;
    });
  }

  /** Counts a fold into `metric`'s overflow series. */
  overflowed(metric: string): void {
    this.overflowDelta[metric] = (this.overflowDelta[metric] ?? 0) + 1;
    this.overflowCount++;
  }

  /** Logs `line()` unless (reason, metric) was warned about already or MAX_WARNED pairs were. */
  warnOnce(reason: DropReason, metric: string, line: () => string): void {
    const key = `${reason}\u0000${clip(metric)}`;
    if (this.warned.size < MAX_WARNED && !this.warned.has(key)) {
      this.warned.add(key);
      this.log(line());
    }
  }

  /** The deltas since the last take, reset for the next flush. */
  take(): LedgerDeltas {
    const out = { dropped: this.delta, overflowed: this.overflowDelta };
    this.delta = {};
    this.deltaCount = 0;
    this.overflowDelta = {};
    this.overflowCount = 0;
    return out;
  }
}
