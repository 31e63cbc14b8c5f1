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

  /** The points, oldest first; with `sinceS`, only those after it. */
  points(sinceS = -Infinity): Array<[number, number | null]> {
    const out: Array<[number, number | null]> = [];
    const start = (this.next - this.count + this.size) % this.size;
    for (let i = 0; i < this.count; i++) {
      const j = (start + i) % this.size;
      const t = this.t[j]!;
      if (t <= sinceS) continue;
      const v = this.v[j]!;
      out.push([t, Number.isNaN(v) ? null : Math.round(v * 1e6) / 1e6]);
    }
    return out;
  }
}
