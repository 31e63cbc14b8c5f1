/**
 * Binds one series of a pipeline family, or a no-op: when stats are off (--disable-log-stats,
 * decided once at construction) or the family is not declared in metrics.yaml.
 */
import type { MetricsPort, SeriesHandle } from '../models/metrics-port.js';

/** A series that records nothing. */
export const NOOP_SERIES: SeriesHandle = Object.freeze({ record: (): void => undefined });

/** Binds `name` with `values` (by dimension name); NOOP_SERIES when `enabled` is false or the metric is absent. */
export function bindOrNoop(
  metrics: Pick<MetricsPort, 'get'>,
  enabled: boolean,
  name: string,
  values: Readonly<Record<string, string>>,
): SeriesHandle {
  if (!enabled) return NOOP_SERIES;
  const m = metrics.get(name);
  return m === null ? NOOP_SERIES : m.bind(values);
}
