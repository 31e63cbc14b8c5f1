/**
 * Automatic labels resolved for one metric and one process: which labels the server appends
 * after a metric's declared dimensions, under which names, with which values. Resolved when a
 * series is bound, never per record; every sink renders from the result.
 */
import type { MetricSpec } from './types.js';
import type { AutoLabels } from './metrics-api.js';
import { HOSTNAME_AUTO_LABEL } from './metrics-api.js';

/** One automatic label of a metric: the label name it renders under and the `AutoLabels` key of its value. */
export interface AutoLabel {
  readonly label: string;
  readonly key: string;
}

/**
 * A metric's automatic labels, in order, for a process whose automatic labels have the keys
 * `keys`: the hostname under the metric's `hostLabel` (none when null: a ts_metrics entry that
 * did not declare it), every other key under its own name — unless a declared dimension already
 * has that name (the declared one wins).
 */
export function metricAutoLabels(
  spec: Pick<MetricSpec, 'dimensions' | 'hostLabel'>,
  keys: readonly string[],
): readonly AutoLabel[] {
  const out: AutoLabel[] = [];
  for (const key of keys) {
    if (key === HOSTNAME_AUTO_LABEL) {
      if (spec.hostLabel !== null) out.push({ label: spec.hostLabel, key });
    } else if (!spec.dimensions.includes(key)) {
      out.push({ label: key, key });
    }
  }
  return Object.freeze(out);
}

/**
 * Declared dimensions that an automatic label set stands in for: an engine that is a replica of
 * a pipeline stage is named by its `stage` and `replica` labels, so its families carry those
 * instead of `engine` (vLLM-Omni's relabelling, decided here at bind — one label set per series).
 */
export const SUPERSEDED_DIMENSIONS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  engine: Object.freeze(['stage', 'replica']),
});

/** Indices of `dimensions` whose superseding automatic labels are all among `keys`. */
export function supersededDimensions(dimensions: readonly string[], keys: readonly string[]): readonly number[] {
  const out: number[] = [];
  dimensions.forEach((d, i) => {
    const by = SUPERSEDED_DIMENSIONS[d];
    if (by !== undefined && by.every((k) => keys.includes(k))) out.push(i);
  });
  return Object.freeze(out);
}

/** `items` (a metric's declared dimension names or values) without the superseded positions. */
export function keptDimensions<T>(items: readonly T[], auto: Pick<BoundAutoLabels, 'omitted'>): readonly T[] {
  return auto.omitted.length === 0 ? items : items.filter((_, i) => !auto.omitted.includes(i));
}

/** A metric's automatic labels with one process's values: what a sink appends at bind. */
export interface BoundAutoLabels {
  /** The process's host name, '' when it has none (tslog prints it in `|#hostname:` for every metric). */
  readonly hostname: string;
  /** Label names after the declared dimensions, in order (the hostname under `hostLabel` included). */
  readonly names: readonly string[];
  /** Their values, as long as `names`. */
  readonly values: readonly string[];
  /** Whether `names[i]` is the hostname (tslog prints that one in its own segment). */
  readonly isHostname: readonly boolean[];
  /** An unambiguous key of names and values: series of processes with other labels stay apart. */
  readonly key: string;
  /** Declared dimensions (indices) these labels supersede: sinks do not render them. Usually empty. */
  readonly omitted: readonly number[];
}

/** Binds `spec`'s automatic labels to the values of one process (`auto`, ordered). */
export function bindAutoLabels(spec: Pick<MetricSpec, 'dimensions' | 'hostLabel'>, auto: AutoLabels): BoundAutoLabels {
  const labels = metricAutoLabels(spec, Object.keys(auto));
  const names = labels.map((l) => l.label);
  const values = labels.map((l) => auto[l.key] as string);
  let key = '';
  for (let i = 0; i < names.length; i++) {
    const n = names[i] as string;
    const v = values[i] as string;
    key += n.length + ':' + n + v.length + ':' + v;
  }
  return Object.freeze({
    hostname: auto[HOSTNAME_AUTO_LABEL] ?? '',
    names: Object.freeze(names),
    values: Object.freeze(values),
    isHostname: Object.freeze(labels.map((l) => l.key === HOSTNAME_AUTO_LABEL)),
    key,
    omitted: supersededDimensions(spec.dimensions, names),
  });
}
