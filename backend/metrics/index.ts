/** The worker metrics cache: what handler code and the worker runtime import. */
export { WorkerMetrics, createWorkerMetrics } from './worker-metrics.js';
export type { WorkerMetricsApi, WorkerMetricsOptions } from './worker-metrics-api.js';
export type { WorkerMetric } from './worker-metric.js';
export type { BoundSeries, DimensionValues } from '../../schema/metrics-api.js';
export { mapUnit } from './units.js';
export type { TimeUnit, SizeUnit } from './units.js';
