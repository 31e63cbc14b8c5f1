/**
 * The slice of `FrontendMetrics` (frontend/metrics) the server uses, as a structural type, so
 * the server's modules can be unit-tested with a recording fake.
 */
import type { MetricSpec, SinkMode } from '../../schema/types.js';

/** A bound series: recording is an index and an add. */
export interface SeriesHandle {
  record(value: number, requestId?: string): void;
}

/** One declared metric. Dimension values exclude the hostname (filled automatically). */
export interface MetricHandle {
  readonly spec: MetricSpec;
  bind(dimensionValues?: readonly string[] | Readonly<Record<string, string>>): SeriesHandle;
}

/** What the server needs from the metrics cache. */
export interface MetricsPort {
  get(name: string): MetricHandle | null;
  /** The exposition; `format` defaults to the text format 0.0.4. */
  prometheusText(names?: readonly string[], format?: 'text' | 'openmetrics'): Promise<string>;
  readonly prometheusContentType: string;
  readonly modes: readonly SinkMode[];
  close(): Promise<void>;
}
