/**
 * A model metric as handler code sees it in the worker: resolve dimensions once on `bind`,
 * then `record(value)` is a type check and an append into the shared point buffer.
 */
import type { MetricType } from '../../schema/types';
import { OVERFLOW_LABEL_VALUE } from '../../schema/types';
import type { WorkerDropReason } from '../../schema/ipc';
import type { PointBuffer } from './point-buffer';
import { describeDimensionValues, orderDimensionValues, seriesKey } from './dimensions';
import type { DimensionValues } from './dimensions';

/** A series bound once; `record` does no lookup, no allocation and no clock read. */
export interface WorkerBoundSeries {
  record(value: number): void;
}

/** A model metric in the worker cache. Never throws: bad input is dropped and counted. */
export interface WorkerMetric {
  readonly name: string;
  readonly type: MetricType;
  readonly unit: string;
  readonly dimensions: readonly string[];
  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void;
  bind(dimensionValues?: DimensionValues): WorkerBoundSeries;
}

/** What a metric needs from the cache that owns it. */
export interface MetricOwner {
  readonly buffer: PointBuffer;
  readonly maxSeriesPerMetric: number;
  /** Allocates a series id and queues its declaration for the next flush. */
  newSeries(metric: string, values: readonly string[]): number;
  /** Counts one dropped datapoint and warns once per (metric, reason). */
  drop(reason: WorkerDropReason, metric: string, detail: string): void;
}

/** Counts a drop for each record; used for a series whose dimensions did not resolve. */
class DroppingSeries implements WorkerBoundSeries {
  constructor(
    private readonly owner: MetricOwner,
    private readonly metric: string,
    private readonly reason: WorkerDropReason,
    private readonly detail: string,
  ) {}

  record(): void {
    this.owner.drop(this.reason, this.metric, this.detail);
  }
}

/** The live bound series: checks the value and appends it. */
class BoundSeries implements WorkerBoundSeries {
  constructor(
    private readonly owner: MetricOwner,
    private readonly buffer: PointBuffer,
    private readonly metric: string,
    /** The series id the datapoints carry (read by the unbound path with a request id). */
    readonly id: number,
    private readonly counter: boolean,
  ) {}

  record(value: number): void {
    // `v - v !== 0` is true for NaN, ±Infinity; the typeof keeps strings from coercing.
    if (typeof value !== 'number' || value - value !== 0) {
      this.owner.drop('not_finite', this.metric, `value ${String(value)} is not a finite number`);
      return;
    }
    if (this.counter && value < 0) {
      this.owner.drop('negative_counter', this.metric, 'Counter metric update value cannot be negative');
      return;
    }
    this.buffer.push(this.id, value);
  }
}

/** A declared or auto-detected model metric. */
export class LiveMetric implements WorkerMetric {
  private readonly series = new Map<string, BoundSeries>();
  private overflow: BoundSeries | null = null;

  constructor(
    private readonly owner: MetricOwner,
    readonly name: string,
    readonly type: MetricType,
    readonly unit: string,
    readonly dimensions: readonly string[],
  ) {}

  /** Resolves the values to a series (declared to the frontend on first use). */
  bind(dimensionValues?: DimensionValues): WorkerBoundSeries {
    const values = orderDimensionValues(this.dimensions, dimensionValues);
    if (values === null) {
      return new DroppingSeries(this.owner, this.name, 'bad_dimensions', this.badDimensions(dimensionValues));
    }
    return this.seriesFor(values);
  }

  /** The unbound path: resolves on every call, refreshes the clock, honours `requestId`. */
  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void {
    const values = orderDimensionValues(this.dimensions, dimensionValues);
    if (values === null) {
      this.owner.drop('bad_dimensions', this.name, this.badDimensions(dimensionValues));
      return;
    }
    const buffer = this.owner.buffer;
    buffer.tick();
    if (requestId === undefined || requestId === null || requestId === '') {
      this.seriesFor(values).record(value);
      return;
    }
    if (typeof value !== 'number' || value - value !== 0) {
      this.owner.drop('not_finite', this.name, `value ${String(value)} is not a finite number`);
      return;
    }
    if (this.type === 'counter' && value < 0) {
      this.owner.drop('negative_counter', this.name, 'Counter metric update value cannot be negative');
      return;
    }
    buffer.pushWithRequest(this.seriesFor(values).id, value, String(requestId));
  }

  private seriesFor(values: string[]): BoundSeries {
    const key = seriesKey(values);
    let s = this.series.get(key);
    if (s === undefined) {
      if (this.series.size >= this.owner.maxSeriesPerMetric) return this.overflowSeries();
      s = this.newBound(values);
      this.series.set(key, s);
    }
    return s;
  }

  private overflowSeries(): BoundSeries {
    if (this.overflow === null) {
      this.overflow = this.newBound(this.dimensions.map(() => OVERFLOW_LABEL_VALUE));
    }
    return this.overflow;
  }

  private newBound(values: readonly string[]): BoundSeries {
    const id = this.owner.newSeries(this.name, values);
    return new BoundSeries(this.owner, this.owner.buffer, this.name, id, this.type === 'counter');
  }

  private badDimensions(given: unknown): string {
    return `Dimension values ${describeDimensionValues(given)} should correspond to Dimension names: [${this.dimensions.join(', ')}]`;
  }
}

/** Stand-in returned for an unknown or mismatching metric: every datapoint is a counted drop. */
export class NoopMetric implements WorkerMetric {
  private readonly bound: DroppingSeries;

  constructor(
    private readonly owner: MetricOwner,
    readonly name: string,
    readonly type: MetricType,
    readonly unit: string,
    readonly dimensions: readonly string[],
    private readonly reason: WorkerDropReason,
    private readonly detail: string,
  ) {
    this.bound = new DroppingSeries(owner, name, reason, detail);
  }

  addOrUpdate(): void {
    this.owner.drop(this.reason, this.name, this.detail);
  }

  bind(): WorkerBoundSeries {
    return this.bound;
  }
}
