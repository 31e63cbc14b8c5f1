/** The public shapes of the frontend metrics cache (re-exported by `frontend-metrics.ts`). */
import type { MetricSpec } from '../../schema/types.js';

/** Dimension values by name, or in declared order; the hostname is never passed. */
export type DimensionValues = readonly string[] | Readonly<Record<string, string>>;

/** One series bound once: `record` is a finite check and a loop over per-sink children. */
export interface BoundSeries {
  /**
   * Record one datapoint; `timeMs` is epoch ms (default now); `source` is the worker it came
   * from (the ingest sets it; gauges keep one value per source). Never throws.
   */
  record(value: number, requestId?: string, timeMs?: number, source?: string): void;
}

/** A declared (or auto-detected) metric in the frontend cache. */
export interface FrontendMetric {
  readonly spec: MetricSpec;
  /** Record one datapoint on the series named by `dimensionValues`. Never throws. */
  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void;
  /** Bind a series once; the bound record path does no lookup and no allocation. */
  bind(dimensionValues?: DimensionValues): BoundSeries;
}
