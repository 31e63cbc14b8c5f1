/** A chart's history: the last `size` points `[epoch s, value]` in a fixed ring (no growth). */
export class ChartRing {
  private readonly t: Float64Array;
  private readonly v: Float64Array;
  private next = 0;
  private count = 0;

  constructor(private readonly size: number) {
    this.t = new Float64Array(size);
    this.v = new Float64Array(size);
  }

  /** Adds a point; null (nothing observed) is kept as a gap. */
  push(t: number, value: number | null): void {
    this.t[this.next] = t;
    this.v[this.next] = value === null || !Number.isFinite(value) ? Number.NaN : value;
    this.next = (this.next + 1) % this.size;
    if (this.count < this.size) this.count++;
  }

  /**
   * The points, oldest first; with `sinceS`, only those after it. Times only grow, so the walk
   * starts at the newest and stops at the first point not after `sinceS`: a page's poll, which
   * asks for the last second or two, costs those points, not the whole ring. (A wall clock
   * stepped back hides the points before the step from such a poll; a page reload shows them.)
   */
  points(sinceS = -Infinity): Array<[number, number | null]> {
    let n = 0;
    while (n < this.count && this.t[(this.next - 1 - n + 2 * this.size) % this.size]! > sinceS) n++;
    const out = new Array<[number, number | null]>(n);
    const start = (this.next - n + this.size) % this.size;
    for (let i = 0; i < n; i++) {
      const j = (start + i) % this.size;
      const v = this.v[j]!;
      out[i] = [this.t[j]!, Number.isNaN(v) ? null : Math.round(v * 1e6) / 1e6];
    }
    return out;
  }
}
