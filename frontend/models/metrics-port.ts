/**
 * The slice of `FrontendMetrics` (frontend/metrics) the server uses, as a structural type, so
 * the server's modules can be unit-tested with a recording fake.
 */
import type { MetricSpec, SinkMode } from '../../schema/types.js';
import type { AutoLabels, BoundSeries, DimensionValues } from '../../schema/metrics-api.js';
import type { MetricCells } from '../metrics/metric-cells.js';

/** One declared metric. Dimension values exclude the hostname (filled automatically). */
export interface MetricHandle {
  readonly spec: MetricSpec;
  /** `autoLabels`: the recording process's automatic labels (default the frontend's own). */
  bind(dimensionValues?: DimensionValues, autoLabels?: AutoLabels): BoundSeries;
}

/** What the server needs from the metrics cache. */
export interface MetricsPort {
  get(name: string): MetricHandle | null;
  /** The metric declared with `key: KEY` in the yaml (the families the server fills bind so). */
  byKey(key: string): MetricHandle | null;
  /** The exposition; `format` defaults to the text format 0.0.4. */
  prometheusText(names?: readonly string[], format?: 'text' | 'openmetrics'): Promise<string>;
  readonly prometheusContentType: string;
  /** The prometheus sink's cells, read in place (the status page); null or absent when that sink is off. */
  cells?(): MetricCells | null;
  /** No modes: metrics are off, and the workers get a no-op cache. */
  readonly modes: readonly SinkMode[];
  /** The labels the server fills in; handed to each worker in its init message. */
  readonly autoLabels?: AutoLabels;
  /** A process that recorded gauges exited (a front): what it wrote into live-merge gauges goes. */
  processGone?(source: string): void;
  close(): Promise<void>;
}
