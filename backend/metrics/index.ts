/** The worker metrics cache: what handler code and the worker runtime import. */
export { WorkerMetrics } from './worker-metrics.js';
export type { WorkerMetricsOptions } from './worker-metrics.js';
export type { WorkerMetric, WorkerBoundSeries } from './worker-metric.js';
export type { DimensionValues } from './dimensions.js';
export { mapUnit } from './units.js';
export type { TimeUnit, SizeUnit } from './units.js';
