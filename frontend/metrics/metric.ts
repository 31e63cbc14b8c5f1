/**
 * One metric in the frontend cache: its series (bounded by `maxSeriesPerMetric`, then folded
 * into one overflow series), each bound once to a child in every enabled sink.
 */
import type { MetricSpec } from '../../schema/types.js';
import { OVERFLOW_LABEL_VALUE } from '../../schema/types.js';
import type { BoundSeries, DimensionValues, FrontendMetric } from './api.js';
import type { AutoLabels, DropReason } from '../../schema/metrics-api.js';
import { DroppingSeries, NOOP_SERIES } from '../../schema/metrics-api.js';
import { bindAutoLabels } from '../../schema/auto-labels.js';
import type { BoundAutoLabels } from '../../schema/auto-labels.js';
import type { SinkChild, SinkMetric } from './sinks/sink.js';
import { resolveDimensions } from './dimension-values.js';
import { seriesKey } from './series-key.js';

/** What a metric reports to the self-metrics. */
export interface MetricHooks {
  dropped(reason: DropReason, n: number, metric: string): void;
  seriesCreated(metric: string, liveSeries: number): void;
  overflowed(metric: string, n?: number): void;
  sinkFailed(metric: string, err: unknown): void;
}

/** A bound series: checks the value, then loops over pre-bound sink children. */
class Series implements BoundSeries {
  /**
   * A counter's running total: what each sink's sum reaches (StatsD's per-flush sums stay
   * below it), kept so that a finite datapoint that would make it Infinity is dropped here.
   */
  private total = 0;

  constructor(
    private readonly name: string,
    private readonly counter: boolean,
    private readonly children: readonly SinkChild[],
    private readonly hooks: MetricHooks,
  ) {}

  record(value: number, requestId?: string, timeMs?: number, source?: string): void {
    if (typeof value !== 'number' || value - value !== 0) {
      this.hooks.dropped('not_finite', 1, this.name);
      return;
    }
    if (this.counter && value < 0) {
      this.hooks.dropped('negative_counter', 1, this.name);
      return;
    }
    let rid = requestId;
    if (rid !== undefined && typeof rid !== 'string') {
      if (rid !== null) {
        this.hooks.dropped('bad_request_id', 1, this.name);
        return;
      }
      rid = undefined;
    }
    if (this.counter) {
      const total = this.total + value;
      if (total === Infinity) {
        this.hooks.dropped('counter_overflow', 1, this.name);
        return;
      }
      this.total = total;
    }
    const at = typeof timeMs === 'number' && timeMs - timeMs === 0 ? timeMs : undefined;
    const children = this.children;
    for (let i = 0; i < children.length; i++) {
      try {
        (children[i] as SinkChild).record(value, rid, at, source);
      } catch (err) {
        this.hooks.sinkFailed(this.name, err);
      }
    }
  }
}

/**
 * The cache's implementation of `FrontendMetric`. A series is its dimension values plus the
 * automatic labels of the process that records it, resolved once per process's label set.
 */
export class CachedMetric implements FrontendMetric {
  /** Series by automatic-label key + dimension key (both prefix codes: no collisions). */
  private readonly series = new Map<string, Series>();
  /** One overflow series per automatic-label set. */
  private readonly overflow = new Map<string, Series>();
  private readonly overflowValues: readonly string[];
  private readonly overflowKey: string;
  private readonly badDimensions: DroppingSeries;
  /** This metric's automatic labels with each worker's values, resolved on first bind. */
  private readonly autoBound = new WeakMap<AutoLabels, BoundAutoLabels>();
  /** With the frontend's own values, resolved here once. */
  private readonly ownAuto: BoundAutoLabels;

  constructor(
    readonly spec: MetricSpec,
    private readonly sinkMetrics: readonly SinkMetric[],
    private readonly maxSeries: number,
    private readonly hooks: MetricHooks,
    /** The frontend's own automatic labels, for series it records itself. */
    ownAutoLabels: AutoLabels = {},
  ) {
    this.ownAuto = bindAutoLabels(spec, ownAutoLabels);
    this.overflowValues = Object.freeze(spec.dimensions.map(() => OVERFLOW_LABEL_VALUE));
    this.overflowKey = seriesKey(this.overflowValues);
    this.badDimensions = new DroppingSeries(() => hooks.dropped('bad_dimensions', 1, spec.name));
  }

  /** Live series, the overflow series included. */
  get seriesCount(): number {
    return this.series.size + this.overflow.size;
  }

  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void {
    this.bind(dimensionValues).record(value, requestId);
  }

  bind(dimensionValues?: DimensionValues, autoLabels?: AutoLabels): BoundSeries {
    const values = resolveDimensions(this.spec, dimensionValues);
    if (values === null) return this.badDimensions;
    const auto = autoLabels === undefined ? this.ownAuto : this.autoFor(autoLabels);
    const dimKey = seriesKey(values);
    const key = auto.key + dimKey;
    const found = this.series.get(key);
    if (found !== undefined) return found;
    if (dimKey === this.overflowKey) return this.overflowSeries(auto);
    if (this.series.size >= this.maxSeries) {
      this.hooks.overflowed(this.spec.name);
      return this.overflowSeries(auto);
    }
    const s = this.newSeries(values, auto);
    this.series.set(key, s);
    this.hooks.seriesCreated(this.spec.name, this.seriesCount);
    return s;
  }

  private autoFor(labels: AutoLabels): BoundAutoLabels {
    let b = this.autoBound.get(labels);
    if (b === undefined) this.autoBound.set(labels, (b = bindAutoLabels(this.spec, labels)));
    return b;
  }

  private overflowSeries(auto: BoundAutoLabels): Series {
    let s = this.overflow.get(auto.key);
    if (s === undefined) {
      s = this.newSeries(this.overflowValues, auto);
      this.overflow.set(auto.key, s);
      this.hooks.seriesCreated(this.spec.name, this.seriesCount);
    }
    return s;
  }

  private newSeries(values: readonly string[], auto: BoundAutoLabels): Series {
    const children = this.sinkMetrics.map((m) => m.bind(values, auto));
    return new Series(this.spec.name, this.spec.type === 'counter', children, this.hooks);
  }
}

/**
 * A hidden metric (deprecated past its grace, or `hidden: true`): bound to no sink, so it is not
 * exposed, logged or sent, and its records are no-ops — never drops. Chosen at construction.
 */
export class HiddenMetric implements FrontendMetric {
  constructor(readonly spec: MetricSpec) {}

  addOrUpdate(): void {}

  bind(): BoundSeries {
    return NOOP_SERIES;
  }
}
