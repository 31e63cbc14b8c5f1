/**
 * A histogram cell: per-bucket counts in a typed array (not cumulative; summed at render),
 * sum and count, with the family's frozen bounds. Exemplars, one per bucket, are allocated on
 * the first record that carries a request id.
 */
import { formatValue } from './escape.js';
import { exemplarText } from './exemplar.js';
import type { RenderList, SeriesLabels } from './cell.js';
import { NO_LABELS } from './cell.js';
import { traceIds } from './trace-ids.js';

/** Exemplars of one histogram cell, by bucket index (the last is +Inf). */
interface BucketExemplars {
  readonly requestId: (string | undefined)[];
  readonly traceId: (string | undefined)[];
  readonly value: Float64Array;
  readonly timeMs: Float64Array;
}

/** One bound histogram series. */
export class HistogramCell {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  present = false;
  /** A negative value was observed: the sum is no counter any more (OpenMetrics leaves it out). */
  sawNegative = false;
  private ex: BucketExemplars | null = null;

  /** `tail` is `,a="x"}` or `}`: what follows the `le` label on a bucket line. */
  constructor(
    readonly block: string,
    readonly tail: string,
    private readonly bounds: Float64Array,
    private readonly list: RenderList<HistogramCell>,
    /** What `block` says, unescaped, for in-process readers (metric-cells.ts). */
    readonly labels: SeriesLabels = NO_LABELS,
  ) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  record(value: number, requestId: string | undefined, timeMs: number | undefined): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    (this.counts[i] as number)++;
    this.sum += value;
    this.count++;
    if (value < 0) this.sawNegative = true;
    if (!this.present) {
      this.present = true;
      this.list.push(this);
    }
    if (requestId !== undefined) {
      const n = bounds.length + 1;
      const ex = (this.ex ??= {
        requestId: new Array<string | undefined>(n).fill(undefined),
        traceId: new Array<string | undefined>(n).fill(undefined),
        value: new Float64Array(n),
        timeMs: new Float64Array(n),
      });
      ex.requestId[i] = requestId;
      ex.traceId[i] = traceIds.get(requestId);
      ex.value[i] = value;
      ex.timeMs[i] = timeMs ?? Date.now();
    }
  }

  /** The exemplar suffix of bucket `i`, or '' when it has none. */
  exemplar(i: number): string {
    const ex = this.ex;
    if (ex === null) return '';
    const rid = ex.requestId[i];
    return rid === undefined ? '' : exemplarText(rid, ex.traceId[i], ex.value[i] as number, ex.timeMs[i] as number);
  }

  /**
   * Lines `<prefix[i]><tail> <cumulative>` for every bucket, then `_sum` and `_count`; with
   * `withSum` false, the buckets alone (OpenMetrics has a count if and only if it has a sum).
   */
  lines(
    bucketPrefixes: readonly string[],
    sumName: string,
    countName: string,
    withExemplars: boolean,
    withSum = true,
  ): string {
    let out = '';
    let acc = 0;
    const counts = this.counts;
    for (let i = 0; i < counts.length; i++) {
      acc += counts[i] as number;
      out += '\n' + bucketPrefixes[i] + this.tail + ' ' + formatValue(acc);
      if (withExemplars) out += this.exemplar(i);
    }
    if (!withSum) return out;
    return (
      out +
      '\n' +
      sumName +
      this.block +
      ' ' +
      formatValue(this.sum) +
      '\n' +
      countName +
      this.block +
      ' ' +
      formatValue(this.count)
    );
  }
}
