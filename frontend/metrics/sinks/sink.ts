/**
 * The contract between the metrics cache and an output sink. Everything a sink can resolve
 * ahead of time (prom-client child, log prefix, StatsD name and tags) it resolves in `metric`
 * and `bind`; `SinkChild.record` only formats and appends.
 */
import type { MetricSpec, SinkMode } from '../../../schema/types.js';
import type { BoundAutoLabels } from '../../../schema/auto-labels.js';
import { NOOP_SERIES } from '../../../schema/metrics-api.js';

/** One series of one metric in one sink. */
export interface SinkChild {
  /**
   * `value` is already checked (finite; counters ≥ 0). `timeMs` undefined means now. `source`
   * names the worker that recorded it (undefined: the frontend itself); only gauges use it.
   */
  record(value: number, requestId: string | undefined, timeMs: number | undefined, source?: string): void;
}

/** One metric in one sink. */
export interface SinkMetric {
  /**
   * Bind a series; `values` are in `spec.dimensions` order, automatic labels excluded: those
   * come resolved in `auto` (the recording process's, hostname included) and render after them.
   */
  bind(values: readonly string[], auto: BoundAutoLabels): SinkChild;
}

/** An output sink (tslog, prometheus, statsd). */
export interface Sink {
  readonly mode: SinkMode;
  /** Called once per metric, at construction or when a metric is auto-registered. */
  metric(spec: MetricSpec): SinkMetric;
  /** Flush and release resources, within a bounded time. Never rejects. */
  close(): Promise<void>;
}

/** Logger shape shared by the metrics code. */
export type MetricsLog = (level: 'info' | 'warn' | 'error', msg: string) => void;

/** A child that records nothing (a metric a sink could not build). */
export const NOOP_CHILD: SinkChild = NOOP_SERIES;

/** A metric that binds only no-op children. */
export const NOOP_SINK_METRIC: SinkMetric = Object.freeze({ bind: (): SinkChild => NOOP_CHILD });
