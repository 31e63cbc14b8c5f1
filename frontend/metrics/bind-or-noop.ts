/**
 * The one way the server binds a metric it records by name: the series, or a no-op when the
 * yaml does not declare it (or recording is off). The name is a `BoundMetricName` of the one
 * catalog (schema/metric-catalog.ts), so a misspelt name does not compile.
 */
import type { BoundMetricName } from '../../schema/metric-catalog.js';
import type { BoundSeries, DimensionValues } from '../../schema/metrics-api.js';
import { NOOP_SERIES } from '../../schema/metrics-api.js';

/** What binding needs of a metrics cache (`MetricsPort`, `FrontendMetrics`). */
export interface NamedMetrics {
  get(name: string): { bind(dimensionValues?: DimensionValues): BoundSeries } | null;
}

/** Binds `name` with `dims` (by dimension name); NOOP_SERIES when `enabled` is false or the metric is not declared. */
export function bindOrNoop(
  metrics: NamedMetrics,
  name: BoundMetricName,
  dims: Readonly<Record<string, string>>,
  enabled = true,
): BoundSeries {
  if (!enabled) return NOOP_SERIES;
  const m = metrics.get(name);
  return m === null ? NOOP_SERIES : m.bind(dims);
}
