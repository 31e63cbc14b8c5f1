/**
 * One series' sliding window for `tsserve metrics tail`: every value of the last `windowMs`
 * kept (up to a cap, the oldest cut and counted), so the mean and the percentiles are exact.
 */

/** Default cap of values kept per series window. */
export const WINDOW_CAP = 100_000;

/** What a window shows: `count` is every value seen; the rest cover the window. */
export interface WindowStats {
  readonly count: number;
  /** Values in the window. */
  readonly inWindow: number;
  /** Values in the window per second of window. */
  readonly rate: number;
  readonly last: number;
  readonly mean: number;
  readonly p50: number;
  readonly p99: number;
  /** Values dropped from the window early because it held `cap` values. */
  readonly cut: number;
}

/** Nearest-rank percentile of sorted values: the ceil(p/100·n)-th smallest; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] as number;
}

/** The values of one series over a sliding time window. */
export class SeriesWindow {
  private readonly times: number[] = [];
  private readonly values: number[] = [];
  private head = 0;
  private count = 0;
  private cut = 0;
  private last = Number.NaN;

  constructor(
    private readonly windowMs: number,
    private readonly cap = WINDOW_CAP,
  ) {}

  /** Add one value written at `timeMs` (values arrive in time order). */
  add(timeMs: number, value: number): void {
    this.times.push(timeMs);
    this.values.push(value);
    this.count++;
    this.last = value;
    if (this.times.length - this.head > this.cap) {
      this.head++;
      this.cut++;
    }
    this.compact();
  }

  /** The window ending at `nowMs` (values in (nowMs - windowMs, nowMs]). */
  stats(nowMs: number): WindowStats {
    while (this.head < this.times.length && (this.times[this.head] as number) <= nowMs - this.windowMs) this.head++;
    this.compact();
    const kept: number[] = [];
    let sum = 0;
    for (let i = this.head; i < this.times.length; i++) {
      if ((this.times[i] as number) > nowMs) continue;
      const v = this.values[i] as number;
      kept.push(v);
      sum += v;
    }
    kept.sort((a, b) => a - b);
    const n = kept.length;
    return {
      count: this.count,
      inWindow: n,
      rate: n / (this.windowMs / 1000),
      last: this.last,
      mean: n === 0 ? Number.NaN : sum / n,
      p50: percentile(kept, 50),
      p99: percentile(kept, 99),
      cut: this.cut,
    };
  }

  /** Drop the evicted prefix once it is at least half the arrays (amortised O(1)). */
  private compact(): void {
    if (this.head > 1024 && this.head * 2 >= this.times.length) {
      this.times.splice(0, this.head);
      this.values.splice(0, this.head);
      this.head = 0;
    }
  }
}
