/**
 * Read-only access to the prometheus sink's metric cells by family name, for in-process readers
 * (the status page's sampler): the very values a scrape of `/metrics` renders at that moment,
 * without rendering text, parsing it back, or allocating per series.
 */
import type { SeriesLabels } from './exposition/cell.js';

export type { SeriesLabels } from './exposition/cell.js';

/** The metric cells, by family name (the names `/metrics` shows). */
export interface MetricCells {
  /**
   * Calls `fn` with the labels and value (a counter's total, a gauge's merged value) of each
   * series `/metrics` renders of the counter or gauge family `name`; false when there is none.
   */
  eachValue(name: string, fn: (labels: SeriesLabels, value: number) => void): boolean;
  /** The bucket upper bounds of the histogram family `name` (+Inf implied), or null when there is none. */
  histogramBounds(name: string): readonly number[] | null;
  /**
   * Calls `fn` with each series `/metrics` renders of the histogram family `name`: its labels,
   * per-bucket counts (bounds order, +Inf last, not cumulative; the cell's own array, to read
   * in the call and never keep), sum and count; false when there is no such histogram.
   */
  eachHistogram(
    name: string,
    fn: (labels: SeriesLabels, counts: Float64Array, sum: number, count: number) => void,
  ): boolean;
}
