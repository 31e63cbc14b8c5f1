/**
 * What a histogram family observed between two samples, read straight from its cells: the
 * cumulative bucket counts of the chosen series summed (the family's bounds are shared by all
 * its series), minus the previous sample's, and Prometheus's `histogram_quantile` over that.
 * Its arrays are allocated once, when the family is first seen; a sample allocates nothing.
 */
import type { MetricCells, SeriesLabels } from '../metrics/metric-cells.js';

/** One histogram family's increase over the last sampling interval. */
export class HistogramWindow {
  private bounds: Float64Array | null = null;
  private cur: Float64Array | null = null;
  private prev: Float64Array | null = null;
  /** Cumulative increase per bucket (+Inf last); valid when `ready` and `seen`. */
  private delta: Float64Array | null = null;
  /** Whether the last reading found the family. */
  private seen = false;
  /** Readings taken (a delta needs two). */
  private readings = 0;
  private readonly keep: ((labels: SeriesLabels) => boolean) | null;
  private readonly add = (labels: SeriesLabels, counts: Float64Array): void => {
    if (this.keep !== null && !this.keep(labels)) return;
    const cur = this.cur as Float64Array;
    for (let i = 0; i < counts.length; i++) cur[i] = (cur[i] as number) + (counts[i] as number);
  };

  /** `keep` chooses the series summed (all of them when omitted). */
  constructor(keep?: (labels: SeriesLabels) => boolean) {
    this.keep = keep ?? null;
  }

  /** Reads the family `name` now (nothing when `cells` or `name` is null: the interval saw nothing). */
  read(cells: MetricCells | null, name: string | null): void {
    this.readings++;
    this.seen = false;
    if (cells === null || name === null) {
      // The next reading's increase is then its whole count, as from a scrape without the family.
      this.cur?.fill(0);
      return;
    }
    if (this.bounds === null) {
      const b = cells.histogramBounds(name);
      if (b === null) return;
      this.bounds = Float64Array.from(b);
      this.cur = new Float64Array(b.length + 1);
      this.prev = new Float64Array(b.length + 1);
      this.delta = new Float64Array(b.length + 1);
    }
    const prev = this.cur as Float64Array;
    const cur = this.prev as Float64Array;
    const delta = this.delta as Float64Array;
    this.cur = cur;
    this.prev = prev;
    cur.fill(0);
    if (!cells.eachHistogram(name, this.add)) return;
    this.seen = true;
    // Per-bucket counts to cumulative ones, as the exposition's `le` buckets are.
    for (let i = 1; i < cur.length; i++) cur[i] = (cur[i] as number) + (cur[i - 1] as number);
    for (let i = 0; i < cur.length; i++) delta[i] = Math.max(0, (cur[i] as number) - (prev[i] as number));
  }

  /** Whether two readings are in, so the increase is known. */
  get ready(): boolean {
    return this.readings >= 2;
  }

  /** Observations in the interval (0 before two readings or without the family). */
  get count(): number {
    const d = this.delta;
    return !this.ready || !this.seen || d === null ? 0 : (d[d.length - 1] as number);
  }

  /**
   * The q-quantile of the interval's observations (Prometheus's histogram_quantile: linear
   * within the bucket, the highest finite bound when it falls in +Inf); null when there are none.
   */
  quantile(q: number): number | null {
    const d = this.delta;
    const bounds = this.bounds;
    if (!this.ready || !this.seen || d === null || bounds === null) return null;
    const total = d[d.length - 1] as number;
    if (!(total > 0)) return null;
    const rank = q * total;
    let prevLe = 0;
    let prevCount = 0;
    for (let i = 0; i < d.length; i++) {
      // In +Inf (whose count is the total, so always reached): the highest finite bound.
      if (i === bounds.length) return prevLe;
      const count = d[i] as number;
      const le = bounds[i] as number;
      if (count >= rank) {
        const inBucket = count - prevCount;
        return inBucket <= 0 ? le : prevLe + ((le - prevLe) * (rank - prevCount)) / inBucket;
      }
      prevLe = le;
      prevCount = count;
    }
    return prevLe;
  }
}
