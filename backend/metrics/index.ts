/** The worker metrics cache: what handler code and the worker runtime import. */
export { WorkerMetrics } from './worker-metrics';
export type { WorkerMetricsOptions } from './worker-metrics';
export type { WorkerMetric, WorkerBoundSeries } from './worker-metric';
export type { DimensionValues } from './dimensions';
export { mapUnit } from './units';
export type { TimeUnit, SizeUnit } from './units';
