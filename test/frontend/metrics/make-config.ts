/** Hand-built `MetricsConfig` objects for the frontend metrics tests (no yaml loader needed). */
import type { MetricSpec, MetricsConfig, MetricType, Section, SinkMode, StatsdConfig } from '../../../schema/types.js';

/** A spec with TorchServe-like defaults; override any field. */
export function makeSpec(
  name: string,
  type: MetricType,
  dimensions: readonly string[],
  extra: Partial<MetricSpec> & { section?: Section } = {},
): MetricSpec {
  const section = extra.section ?? 'ts_metrics';
  return {
    name,
    section,
    type,
    unit: 'Count',
    dimensions,
    hostLabel: section === 'model_metrics' ? 'Hostname' : null,
    help: '',
    buckets: type === 'histogram' ? [1, 10] : [],
    pos: null,
    ...extra,
  };
}

/** A whole config around `metrics`. */
export function makeConfig(
  metrics: readonly MetricSpec[],
  opts: { modes?: readonly SinkMode[]; maxSeries?: number; statsd?: Partial<StatsdConfig> } = {},
): MetricsConfig {
  return {
    file: '',
    modes: opts.modes ?? ['tslog'],
    statsd: {
      host: '127.0.0.1',
      port: 8125,
      prefix: '',
      tagStyle: 'datadog',
      histogramType: 'ms',
      ...opts.statsd,
    },
    limits: { maxSeriesPerMetric: opts.maxSeries ?? 1000, maxPointsPerFlush: 1000 },
    autoDetect: true,
    metrics,
  };
}

/** Fixed clock: 2023-07-17T17:00:25.016Z, TorchServe's own sample line time. */
export const FIXED_NOW_MS = 1689613225016;

/** Collects log calls instead of printing them. */
export function captureLog(): { lines: string[]; log: (level: 'info' | 'warn' | 'error', msg: string) => void } {
  const lines: string[] = [];
  return { lines, log: (level, msg) => void lines.push(`${level}: ${msg}`) };
}
