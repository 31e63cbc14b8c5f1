/**
 * One declared metric in the exposition: its cells (one per bound series) and the header
 * text of both formats, built once. Label names are the spec's dimensions in yaml order, then
 * the recording process's automatic labels (the host label first: today's only one).
 */
import type { GaugeMerge, MetricSpec } from '../../../schema/types.js';
import type { BoundAutoLabels } from '../../../schema/auto-labels.js';
import { keptDimensions } from '../../../schema/auto-labels.js';
import type { SinkChild, SinkMetric } from '../sinks/sink.js';
import { CounterCell, GaugeCell, NO_LABELS } from './cell.js';
import type { SeriesLabels } from './cell.js';
import { canonicalFloat, escapeLabelValue, formatValue, labelPairs } from './escape.js';
import { HistogramCell } from './histogram-cell.js';
import { DEFAULT_GAUGE_MERGE, isLive, mergeKind } from './merge.js';
import { openMetricsHeader } from './openmetrics-renderer.js';
import { textHeader } from './text-renderer.js';
import { counterFamilyName } from './units.js';

/** Bounds of a histogram declared without buckets (prom-client's defaults, as before). */
const DEFAULT_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** No automatic labels: the series a family without any label holds from the start. */
const NO_AUTO: BoundAutoLabels = Object.freeze({
  hostname: '',
  names: [],
  values: [],
  isHostname: [],
  key: '',
  omitted: [],
});

/** Help text with the unit, as Prometheus has no unit field in text format 0.0.4 (verbatim when declared so). */
export function prometheusHelp(spec: MetricSpec): string {
  const help = spec.help.trim();
  if (spec.helpVerbatim === true) return help;
  return help.length > 0 ? `${help} (unit: ${spec.unit})` : `${spec.name} (unit: ${spec.unit})`;
}

/** Tracks which gauge cells a process wrote, so its exit can drop or retire its values. */
export type GaugeWriteTracker = (source: string, cell: GaugeCell) => void;

/** A family of one declared metric. */
export abstract class Family implements SinkMetric {
  readonly name: string;
  protected readonly labelNames: readonly string[];
  private readonly textHead: string;
  private readonly omHead: string;

  constructor(
    readonly spec: MetricSpec,
    omFamilyName: string,
  ) {
    this.name = spec.name;
    this.labelNames = spec.hostLabel === null ? spec.dimensions : [...spec.dimensions, spec.hostLabel];
    const help = prometheusHelp(spec);
    this.textHead = textHeader(spec.name, help, spec.type);
    this.omHead = openMetricsHeader(omFamilyName, help, spec.type);
  }

  abstract bind(values: readonly string[], auto: BoundAutoLabels): SinkChild;

  /** `a="x",…,Hostname="h"` for dimension values in yaml order, then the automatic labels. */
  protected pairs(values: readonly string[], auto: BoundAutoLabels): string {
    let pairs =
      auto.omitted.length === 0
        ? labelPairs(this.spec.dimensions, values)
        : labelPairs(keptDimensions(this.spec.dimensions, auto), keptDimensions(values, auto));
    for (let i = 0; i < auto.names.length; i++) {
      const p = (auto.names[i] as string) + '="' + escapeLabelValue(auto.values[i] as string) + '"';
      pairs = pairs === '' ? p : pairs + ',' + p;
    }
    return pairs;
  }

  /** The same labels as `pairs` gives, unescaped, as one frozen record (built once, at bind). */
  protected labels(values: readonly string[], auto: BoundAutoLabels): SeriesLabels {
    const names = keptDimensions(this.spec.dimensions, auto);
    const kept = keptDimensions(values, auto);
    if (names.length === 0 && auto.names.length === 0) return NO_LABELS;
    const out: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) out[names[i] as string] = kept[i] as string;
    for (let i = 0; i < auto.names.length; i++) out[auto.names[i] as string] = auto.values[i] as string;
    return Object.freeze(out);
  }

  /** The sample lines, each preceded by a newline. */
  protected abstract samples(openMetrics: boolean): string;

  /** The family's block in text format 0.0.4 (no trailing newline). */
  text(): string {
    return this.textHead + this.samples(false);
  }

  /** The family's block in OpenMetrics (no trailing newline). */
  openMetrics(): string {
    return this.omHead + this.samples(true);
  }
}

/** A counter family: samples `name` (text) or `family_total` (OpenMetrics) with exemplars. */
export class CounterFamily extends Family {
  private readonly cells: CounterCell[] = [];
  private readonly omSample: string;
  private readonly unlabelled: CounterCell | null;

  constructor(spec: MetricSpec) {
    super(spec, counterFamilyName(spec.name));
    this.omSample = counterFamilyName(spec.name) + '_total';
    this.unlabelled = this.labelNames.length === 0 ? this.cell([], NO_AUTO) : null;
    // A series without labels exists from the start, at 0 (as prom-client rendered it).
    if (this.unlabelled !== null) {
      this.unlabelled.present = true;
      this.cells.push(this.unlabelled);
    }
  }

  private cell(values: readonly string[], auto: BoundAutoLabels): CounterCell {
    const pairs = this.pairs(values, auto);
    return new CounterCell(pairs === '' ? '' : '{' + pairs + '}', this.cells, this.labels(values, auto));
  }

  /** Calls `fn` with each series the exposition renders: its labels and total. */
  eachValue(fn: (labels: SeriesLabels, value: number) => void): void {
    for (const c of this.cells) if (c.present) fn(c.labels, c.value);
  }

  bind(values: readonly string[], auto: BoundAutoLabels): SinkChild {
    return this.unlabelled !== null && auto.names.length === 0 ? this.unlabelled : this.cell(values, auto);
  }

  protected samples(openMetrics: boolean): string {
    const name = openMetrics ? this.omSample : this.name;
    let out = '';
    for (const c of this.cells) if (c.present) out += '\n' + name + c.block + c.sample(openMetrics);
    return out;
  }
}

/** A gauge family: each cell merges its processes' values by the declared mode. */
export class GaugeFamily extends Family {
  private readonly cells: GaugeCell[] = [];
  private readonly unlabelled: GaugeCell | null;
  readonly merge: GaugeMerge;

  constructor(
    spec: MetricSpec,
    private readonly tracker: GaugeWriteTracker,
  ) {
    super(spec, spec.name);
    this.merge = spec.merge ?? DEFAULT_GAUGE_MERGE;
    this.unlabelled = this.labelNames.length === 0 ? this.cell([], NO_AUTO, true) : null;
  }

  private cell(values: readonly string[], auto: BoundAutoLabels, alwaysPresent: boolean): GaugeCell {
    const pairs = this.pairs(values, auto);
    return new GaugeCell(
      pairs === '' ? '' : '{' + pairs + '}',
      this.cells,
      mergeKind(this.merge),
      isLive(this.merge),
      this.tracker,
      alwaysPresent,
      this.labels(values, auto),
    );
  }

  /** Calls `fn` with each series the exposition renders: its labels and merged value. */
  eachValue(fn: (labels: SeriesLabels, value: number) => void): void {
    for (const c of this.cells) if (c.present) fn(c.labels, c.value());
  }

  bind(values: readonly string[], auto: BoundAutoLabels): SinkChild {
    return this.unlabelled !== null && auto.names.length === 0 ? this.unlabelled : this.cell(values, auto, false);
  }

  protected samples(): string {
    let out = '';
    for (const c of this.cells) if (c.present) out += '\n' + this.name + c.block + c.sample();
    return out;
  }
}

/** A histogram family: bucket lines with `le` first, then `_sum` and `_count` (not always in OpenMetrics). */
export class HistogramFamily extends Family {
  private readonly cells: HistogramCell[] = [];
  private readonly bounds: Float64Array;
  /** `name_bucket{le="…"` per bound and +Inf: the text format writes `1`, OpenMetrics `1.0`. */
  private readonly bucketPrefixes: readonly string[];
  private readonly omBucketPrefixes: readonly string[];
  private readonly unlabelled: HistogramCell | null;
  /**
   * OpenMetrics 1.0: Sum is a counter, so a histogram with negative thresholds MUST NOT expose
   * it, nor (for the same reason) a series that observed a negative value; and Count is there
   * if and only if Sum is. Such series render their buckets alone (`+Inf` is the count).
   */
  private readonly negativeBounds: boolean;

  constructor(spec: MetricSpec) {
    super(spec, spec.name);
    const bounds = spec.buckets.length > 0 ? spec.buckets : DEFAULT_BUCKETS;
    this.bounds = Float64Array.from(bounds);
    this.negativeBounds = bounds.some((b) => b < 0);
    this.bucketPrefixes = Object.freeze([
      ...bounds.map((b) => `${spec.name}_bucket{le="${formatValue(b)}"`),
      `${spec.name}_bucket{le="+Inf"`,
    ]);
    this.omBucketPrefixes = Object.freeze([
      ...bounds.map((b) => `${spec.name}_bucket{le="${canonicalFloat(b)}"`),
      `${spec.name}_bucket{le="+Inf"`,
    ]);
    this.unlabelled = this.labelNames.length === 0 ? this.cell([], NO_AUTO) : null;
    if (this.unlabelled !== null) {
      this.unlabelled.present = true;
      this.cells.push(this.unlabelled);
    }
  }

  private cell(values: readonly string[], auto: BoundAutoLabels): HistogramCell {
    const pairs = this.pairs(values, auto);
    return pairs === ''
      ? new HistogramCell('', '}', this.bounds, this.cells)
      : new HistogramCell('{' + pairs + '}', ',' + pairs + '}', this.bounds, this.cells, this.labels(values, auto));
  }

  /**
   * Calls `fn` with each series the exposition renders: its labels, its per-bucket counts (in
   * `bounds()` order, +Inf last; not cumulative, and the cell's own array: read, never keep),
   * its sum and its count.
   */
  eachSeries(fn: (labels: SeriesLabels, counts: Float64Array, sum: number, count: number) => void): void {
    for (const c of this.cells) if (c.present) fn(c.labels, c.counts, c.sum, c.count);
  }

  bind(values: readonly string[], auto: BoundAutoLabels): SinkChild {
    return this.unlabelled !== null && auto.names.length === 0 ? this.unlabelled : this.cell(values, auto);
  }

  /** The bucket upper bounds (+Inf implied), as the cells count them. */
  boundaries(): readonly number[] {
    return Array.from(this.bounds);
  }

  protected samples(openMetrics: boolean): string {
    let out = '';
    const sum = this.name + '_sum';
    const count = this.name + '_count';
    for (const c of this.cells) {
      if (c.present)
        out += c.lines(
          openMetrics ? this.omBucketPrefixes : this.bucketPrefixes,
          sum,
          count,
          openMetrics,
          !openMetrics || !(this.negativeBounds || c.sawNegative),
        );
    }
    return out;
  }
}
