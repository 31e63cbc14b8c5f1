/**
 * One metric in the frontend cache: its series (bounded by `maxSeriesPerMetric`, then folded
 * into one overflow series), each bound once to a child in every enabled sink.
 */
import type { MetricSpec } from '../../schema/types.js';
import { OVERFLOW_LABEL_VALUE } from '../../schema/types.js';
import type { BoundSeries, DimensionValues, FrontendMetric } from './api.js';
import type { DropReason } from '../../schema/metrics-api.js';
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

/** A series whose binding failed: every record is a counted drop. */
class DroppingSeries implements BoundSeries {
  constructor(
    private readonly name: string,
    private readonly reason: DropReason,
    private readonly hooks: MetricHooks,
  ) {}

  record(): void {
    this.hooks.dropped(this.reason, 1, this.name);
  }
}

/** The cache's implementation of `FrontendMetric`. */
export class CachedMetric implements FrontendMetric {
  private readonly series = new Map<string, Series>();
  private overflow: Series | null = null;
  private readonly overflowValues: readonly string[];
  private readonly overflowKey: string;
  private readonly badDimensions: DroppingSeries;

  constructor(
    readonly spec: MetricSpec,
    private readonly sinkMetrics: readonly SinkMetric[],
    private readonly maxSeries: number,
    private readonly hooks: MetricHooks,
  ) {
    this.overflowValues = Object.freeze(spec.dimensions.map(() => OVERFLOW_LABEL_VALUE));
    this.overflowKey = seriesKey(this.overflowValues);
    this.badDimensions = new DroppingSeries(spec.name, 'bad_dimensions', hooks);
  }

  /** Live series, the overflow series included. */
  get seriesCount(): number {
    return this.series.size + (this.overflow === null ? 0 : 1);
  }

  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void {
    this.bind(dimensionValues).record(value, requestId);
  }

  bind(dimensionValues?: DimensionValues): BoundSeries {
    const values = resolveDimensions(this.spec, dimensionValues);
    if (values === null) return this.badDimensions;
    const key = seriesKey(values);
    const found = this.series.get(key);
    if (found !== undefined) return found;
    if (key === this.overflowKey) return this.overflowSeries();
    if (this.series.size >= this.maxSeries) {
      this.hooks.overflowed(this.spec.name);
      return this.overflowSeries();
    }
    const s = this.newSeries(values);
    this.series.set(key, s);
    this.hooks.seriesCreated(this.spec.name, this.seriesCount);
    return s;
  }

  private overflowSeries(): Series {
    if (this.overflow === null) {
      this.overflow = this.newSeries(this.overflowValues);
      this.hooks.seriesCreated(this.spec.name, this.seriesCount);
    }
    return this.overflow;
  }

  private newSeries(values: readonly string[]): Series {
    const children = this.sinkMetrics.map((m) => m.bind(values));
    return new Series(this.spec.name, this.spec.type === 'counter', children, this.hooks);
  }
}

const SILENT: BoundSeries = Object.freeze({ record(): void {} });

/**
 * A hidden metric (deprecated past its grace, or `hidden: true`): bound to no sink, so it is not
 * exposed, logged or sent, and its records are no-ops — never drops. Chosen at construction.
 */
export class HiddenMetric implements FrontendMetric {
  constructor(readonly spec: MetricSpec) {}

  addOrUpdate(): void {}

  bind(): BoundSeries {
    return SILENT;
  }
}
