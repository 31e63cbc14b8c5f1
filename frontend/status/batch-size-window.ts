/**
 * One model's last `size` RequestBatchSize samples and how often each size occurs among them,
 * kept as they come (a fixed ring and a count per distinct size), so a snapshot reads the
 * distribution without walking the samples.
 */

/** The distribution of a model's recent batch sizes. */
export class BatchSizeWindow {
  private readonly ring: Float64Array;
  private next = 0;
  private filled = 0;
  private readonly counts = new Map<number, number>();

  constructor(private readonly size: number) {
    this.ring = new Float64Array(size);
  }

  /** Adds a sample, dropping the oldest once `size` are kept. */
  push(value: number): void {
    if (this.filled === this.size) {
      const old = this.ring[this.next] as number;
      const left = (this.counts.get(old) ?? 1) - 1;
      if (left === 0) this.counts.delete(old);
      else this.counts.set(old, left);
    } else this.filled++;
    this.ring[this.next] = value;
    this.next = (this.next + 1) % this.size;
    this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
  }

  /** Samples per size, `{"32": 290, "7": 10}`. */
  distribution(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [v, n] of this.counts) out[String(v)] = n;
    return out;
  }
}
