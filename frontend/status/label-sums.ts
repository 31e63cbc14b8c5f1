/**
 * A counter or gauge family's series summed by one label's value (`model_name`, `sink`), read
 * straight from its cells: what `sum by (label)` of a scrape gives. Its map is reused from one
 * reading to the next (entries only for the label's values, never one per series).
 */
import type { MetricCells, SeriesLabels } from '../metrics/metric-cells.js';

/** One family's sums by a label, with its total and largest series over all series. */
export class LabelSums {
  private readonly by = new Map<string, number>();
  /** The sum over every series (those without the label included). */
  total = 0;
  /** The largest series' value, or null when the family has none. */
  max: number | null = null;
  private readonly add = (labels: SeriesLabels, value: number): void => {
    this.total += value;
    if (this.max === null || value > this.max) this.max = value;
    const key = labels[this.label];
    if (key !== undefined) this.by.set(key, (this.by.get(key) ?? 0) + value);
  };

  constructor(private readonly label: string) {}

  /** Reads the family `name` now (empty when `cells` or `name` is null). */
  read(cells: MetricCells | null, name: string | null): void {
    this.by.clear();
    this.total = 0;
    this.max = null;
    if (cells !== null && name !== null) cells.eachValue(name, this.add);
  }

  /** The sum of the series whose label is `value` (0 when none). */
  get(value: string): number {
    return this.by.get(value) ?? 0;
  }

  /** Whether some series has the label at `value`. */
  has(value: string): boolean {
    return this.by.has(value);
  }
}
