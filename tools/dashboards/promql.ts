/**
 * PromQL built from a declared family: the series names Prometheus stores, label matchers for
 * the dashboard's template variables, and the usual shapes (rate, mean, quantile, heatmap).
 * Shared by the dashboards and the rules, so both query exactly the same series.
 */
import { counterFamilyName } from '../../frontend/metrics/exposition/units.js';
import type { MetricSpec } from '../../schema/types.js';
import { modelLabel } from './families.js';

/** Template variables a dashboard may have, each filtering the label of the same name. */
export type VarName = 'instance' | 'model_name' | 'engine' | 'stage' | 'replica';

/** Every template variable, in the order a dashboard shows them. */
export const VAR_NAMES: readonly VarName[] = ['instance', 'model_name', 'engine', 'stage', 'replica'];

/** The dashboard's `$__rate_interval`: Grafana's window for rates (≥ 4 scrape intervals). */
export const RATE_INTERVAL = '$__rate_interval';

/**
 * The name Prometheus stores a family's samples under. A counter is stored with `_total`
 * whatever its declared name (Prometheus scrapes OpenMetrics by default, where a counter's
 * samples always end in `_total`: TorchServe's `Requests2XX` is `Requests2XX_total`), a
 * histogram as `name_bucket` / `_sum` / `_count`, a gauge as its name.
 */
export function seriesName(spec: MetricSpec, part?: 'bucket' | 'sum' | 'count'): string {
  if (spec.type === 'counter') return counterFamilyName(spec.name) + '_total';
  return part === undefined ? spec.name : `${spec.name}_${part}`;
}

/** The label a variable filters on this family, or null when the family does not carry it. */
export function varLabel(spec: MetricSpec, v: VarName): string | null {
  if (v === 'instance') return 'instance';
  if (v === 'model_name') return modelLabel(spec);
  return spec.dimensions.includes(v) ? v : null;
}

/** `{label=~"$var",...}` for the variables in `vars` that the family carries, plus `extra` matchers. */
export function matchers(spec: MetricSpec, vars: readonly VarName[], extra: readonly string[] = []): string {
  const m: string[] = [];
  for (const v of vars) {
    const label = varLabel(spec, v);
    if (label !== null) m.push(`${label}=~"$${v}"`);
  }
  m.push(...extra);
  return m.length === 0 ? '' : `{${m.join(', ')}}`;
}

/** A selector of the family's stored series (`part` for histograms). */
export function selector(
  spec: MetricSpec,
  vars: readonly VarName[],
  part?: 'bucket' | 'sum' | 'count',
  extra: readonly string[] = [],
): string {
  return seriesName(spec, part) + matchers(spec, vars, extra);
}

/** `sum by (a, b) (x)`, or `sum(x)` without labels. */
export function sumBy(by: readonly string[], inner: string): string {
  return by.length === 0 ? `sum(${inner})` : `sum by (${by.join(', ')}) (${inner})`;
}

/** Per-second rate of a counter (or of a histogram's `_count`/`_sum`), summed by `by`. */
export function rate(
  spec: MetricSpec,
  vars: readonly VarName[],
  by: readonly string[],
  window = RATE_INTERVAL,
  extra: readonly string[] = [],
): string {
  const part = spec.type === 'histogram' ? 'count' : undefined;
  return sumBy(by, `rate(${selector(spec, vars, part, extra)}[${window}])`);
}

/** Mean of a histogram's observations over the window: rate of `_sum` over rate of `_count`. */
export function mean(
  spec: MetricSpec,
  vars: readonly VarName[],
  by: readonly string[],
  window = RATE_INTERVAL,
): string {
  return `${sumBy(by, `rate(${selector(spec, vars, 'sum')}[${window}])`)} / ${sumBy(by, `rate(${selector(spec, vars, 'count')}[${window}])`)}`;
}

/** The q-quantile of a histogram over the window, from its buckets summed by `le` and `by`. */
export function quantile(
  q: number,
  spec: MetricSpec,
  vars: readonly VarName[],
  by: readonly string[],
  window = RATE_INTERVAL,
): string {
  return `histogram_quantile(${q}, ${sumBy(['le', ...by], `rate(${selector(spec, vars, 'bucket')}[${window}])`)})`;
}

/** A heatmap's query: observations per bucket in each interval (Grafana's `format: heatmap`). */
export function heatmap(spec: MetricSpec, vars: readonly VarName[]): string {
  return sumBy(['le'], `increase(${selector(spec, vars, 'bucket')}[${RATE_INTERVAL}])`);
}

/** The labels a generic panel groups by: instance and the declared dimensions (the hostname is per instance). */
export function groupLabels(spec: MetricSpec): string[] {
  return ['instance', ...spec.dimensions];
}

/** A Grafana legend naming each of `labels`: `{{instance}} {{model_name}}`. */
export function legend(labels: readonly string[]): string {
  return labels.map((l) => `{{${l}}}`).join(' ');
}
