/**
 * Panels for one declared family, by its type: a counter as a rate, a gauge as its value, a
 * histogram as p50/p90/p99 (and the mean) plus a heatmap of its buckets. Used for curated
 * families and for every family no curated panel took (custom model metrics, new families).
 */
import { unitKind } from '../../schema/config/units.js';
import type { MetricSpec } from '../../schema/types.js';
import type { PanelSpec, Query } from './grafana.js';
import type { VarName } from './promql.js';
import { groupLabels, heatmap, legend, mean, quantile, rate, selector } from './promql.js';

/** The quantiles a latency panel draws. */
export const QUANTILES: readonly number[] = [0.5, 0.9, 0.99];

/**
 * Grafana's unit id for a family's values (as recorded, not rates). A ratio shows as a
 * percentage only when its name says it is a share (`_ratio`, `_perc`): a real-time factor is
 * a ratio too, and 1.5 is not "150%". Sizes take Grafana's binary units (kbytes = KiB): tsserve
 * records kB, MB and GB 1024 apart (addSize, the system metrics, as TorchServe), and Grafana's
 * decimal ones (deckbytes) would show 1536 kB as 1.57 MB instead of 1.5.
 */
export function grafanaUnit(unit: string, name = ''): string {
  const u = unit.trim().toLowerCase();
  switch (unitKind(unit)) {
    case 'seconds':
      return 's';
    case 'milliseconds':
      return 'ms';
    case 'microseconds':
      return 'µs';
    case 'percent':
      return 'percent';
    case 'ratio':
      return /_(ratio|perc)$/.test(name) ? 'percentunit' : 'short';
    case 'bytes':
      return 'bytes';
    case 'scaled_bytes':
      return u.startsWith('k')
        ? 'kbytes'
        : u.startsWith('m')
          ? 'mbytes'
          : u.startsWith('g')
            ? 'gbytes'
            : u.startsWith('t')
              ? 'tbytes'
              : 'short';
    default:
      return 'short';
  }
}

/**
 * The unit of a counter's per-second rate: requests/s for a count of requests (the unit or the
 * name says so: TorchServe's counts are all `Count`), counts/s for any other count (Grafana's
 * reqps reads "req/s", wrong for calls, words or dropped datapoints), else a plain number
 * (tokens, and a time or size per second).
 */
export function rateUnit(unit: string, name = ''): string {
  if (unitKind(unit) !== 'count' || /token/i.test(unit)) return 'short';
  return /^requests?$/i.test(unit.trim()) || /request/i.test(name) ? 'reqps' : 'cps';
}

/** The help text as a panel description, with the family it queries named. */
export function describe(spec: MetricSpec, extra = ''): string {
  return `${spec.help}${extra === '' ? '' : ` ${extra}`} (\`${spec.name}\`, ${spec.type}, unit ${spec.unit})`;
}

/** One query per quantile, plus the mean. */
export function quantileQueries(spec: MetricSpec, vars: readonly VarName[], by: readonly string[] = []): Query[] {
  const prefix = by.length === 0 ? '' : legend(by) + ' ';
  return [
    ...QUANTILES.map((q) => ({ expr: quantile(q, spec, vars, by), legend: `${prefix}p${Math.round(q * 100)}` })),
    { expr: mean(spec, vars, by), legend: `${prefix}mean` },
  ];
}

/** A histogram's quantile panel and heatmap panel. */
export function histogramPanels(spec: MetricSpec, vars: readonly VarName[], title: string): PanelSpec[] {
  const unit = grafanaUnit(spec.unit, spec.name);
  return [
    {
      type: 'timeseries',
      title: `${title}: p50 / p90 / p99`,
      description: describe(spec),
      unit,
      queries: quantileQueries(spec, vars),
    },
    {
      type: 'heatmap',
      title: `${title}: heatmap`,
      description: describe(spec, 'Observations per bucket and interval.'),
      unit,
      queries: [{ expr: heatmap(spec, vars), legend: '{{le}}', format: 'heatmap' }],
    },
  ];
}

/** A counter's rate panel, one line per series. */
export function counterPanel(spec: MetricSpec, vars: readonly VarName[], title = spec.name): PanelSpec {
  const by = groupLabels(spec);
  return {
    type: 'timeseries',
    title: `${title} (per second)`,
    description: describe(spec),
    unit: rateUnit(spec.unit, spec.name),
    queries: [{ expr: rate(spec, vars, by), legend: legend(by) }],
  };
}

/** A gauge's value panel, one line per series. */
export function gaugePanel(spec: MetricSpec, vars: readonly VarName[], title = spec.name): PanelSpec {
  return {
    type: 'timeseries',
    title,
    description: describe(spec),
    unit: grafanaUnit(spec.unit, spec.name),
    queries: [{ expr: selector(spec, vars), legend: legend(groupLabels(spec)) }],
  };
}

/** The panels a family gets by its type alone. */
export function genericPanels(spec: MetricSpec, vars: readonly VarName[]): PanelSpec[] {
  if (spec.type === 'counter') return [counterPanel(spec, vars)];
  if (spec.type === 'gauge') return [gaugePanel(spec, vars)];
  return histogramPanels(spec, vars, spec.name);
}
