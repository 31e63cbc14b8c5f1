/** Builds in-memory MetricsConfig objects for the metrics tests (the loader is not under test). */
import type { MetricSpec, MetricsConfig, MetricType, Section } from '../../../schema/types.js';

/** A spec with TorchServe-like defaults for the fields a test does not care about. */
export function spec(
  name: string,
  type: MetricType,
  unit: string,
  dimensions: readonly string[],
  section: Section = 'model_metrics',
): MetricSpec {
  return {
    name,
    section,
    type,
    unit,
    dimensions,
    hostLabel: section === 'model_metrics' ? 'Hostname' : null,
    help: '',
    buckets: type === 'histogram' ? [1, 10, 100] : [],
    pos: null,
  };
}

/** A config holding `metrics`, with small limits unless given. */
export function config(
  metrics: readonly MetricSpec[],
  opts: { autoDetect?: boolean; maxPointsPerFlush?: number; maxSeriesPerMetric?: number } = {},
): MetricsConfig {
  return {
    file: '',
    modes: ['prometheus'],
    statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
    limits: { maxSeriesPerMetric: opts.maxSeriesPerMetric ?? 1000, maxPointsPerFlush: opts.maxPointsPerFlush ?? 10000 },
    autoDetect: opts.autoDetect ?? false,
    metrics,
  };
}

/** The model metrics most tests use (TorchServe's defaults plus a few). */
export const MODEL_SPECS: readonly MetricSpec[] = [
  spec('Requests2XX', 'counter', 'Count', ['Level'], 'ts_metrics'),
  spec('HandlerTime', 'gauge', 'ms', ['ModelName', 'Level']),
  spec('PredictionTime', 'gauge', 'ms', ['ModelName', 'Level']),
  spec('InferenceCount', 'counter', 'Count', ['ModelName', 'Level', 'Device']),
  spec('LatencyHist', 'histogram', 'ms', ['ModelName']),
  spec('NoDims', 'counter', 'Count', []),
];
