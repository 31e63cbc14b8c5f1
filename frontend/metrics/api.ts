/** The public shapes of the frontend metrics cache (re-exported by `frontend-metrics.ts`). */
import type { MetricSpec } from '../../schema/types.js';
import type { AutoLabels, BoundSeries, DimensionValues } from '../../schema/metrics-api.js';

export type { BoundSeries, DimensionValues } from '../../schema/metrics-api.js';

/** A declared (or auto-detected) metric in the frontend cache. */
export interface FrontendMetric {
  readonly spec: MetricSpec;
  /** Record one datapoint on the series named by `dimensionValues`. Never throws. */
  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void;
  /**
   * Bind a series once; the bound record path does no lookup and no allocation. `autoLabels`
   * are the recording process's automatic labels: the ingest passes a worker's (from its init
   * message); omitted, the frontend's own.
   */
  bind(dimensionValues?: DimensionValues, autoLabels?: AutoLabels): BoundSeries;
}
