/**
 * Builds the typed MetricsConfig from a document that passed the schema and the rules.
 * Applies the defaults (modes, statsd, limits, help, buckets) and the hostname convention.
 */
import type {
  Deprecation,
  GaugeMerge,
  MetricSpec,
  MetricType,
  MetricsConfig,
  Section,
  SourcePos,
  StatsdConfig,
  MetricsLimits,
} from '../types.js';
import { SECTIONS, TYPES, getAt, isRecord } from './doc.js';
import { parseModes } from './modes.js';
import { HOSTNAME_RE } from './names.js';
import { presetBuckets, presetForUnit } from './presets.js';
import { withNotice } from './stability.js';
import type { DocPath } from './yaml-types.js';

/** Where each metric entry sits, or null for configs built in memory. */
export type PosOf = (path: DocPath) => SourcePos | null;

/** Defaults, exported for docs and tests. */
export const DEFAULT_STATSD: StatsdConfig = {
  host: '127.0.0.1',
  port: 8125,
  prefix: '',
  tagStyle: 'datadog',
  histogramType: 'h',
};
export const DEFAULT_LIMITS = {
  maxSeriesPerMetric: 10000,
  maxPointsPerFlush: 65536,
  maxAutoDetectedMetrics: 100,
  maxDimensionsPerMetric: 16,
} as const satisfies Required<MetricsLimits>;

/**
 * The default help text: the name alone. The exposition appends ` (unit: UNIT)` to every help
 * and the catalog has type and unit columns, so a default naming them showed the unit twice.
 */
export function defaultHelp(name: string): string {
  return name;
}

/** Normalizes a validated document; `file` is stored as given (the caller resolves it). */
export function normalize(doc: Record<string, unknown>, file: string, posOf: PosOf): MetricsConfig {
  const metrics: MetricSpec[] = [];
  for (const section of SECTIONS) {
    const sec = doc[section];
    if (!isRecord(sec)) continue;
    // Type lists in file order (key order of the parsed mapping), entries in file order.
    for (const type of Object.keys(sec)) {
      const list = sec[type];
      if (!TYPES.includes(type as MetricType) || !Array.isArray(list)) continue;
      list.forEach((m, i) => {
        if (isRecord(m)) metrics.push(metricSpec(m, section, type as MetricType, posOf([section, type, i])));
      });
    }
  }
  return {
    file,
    modes: parseModes(doc.mode),
    statsd: statsd(doc.statsd),
    limits: limits(doc.limits),
    autoDetect: doc.model_metrics_auto_detect === true,
    metrics,
  };
}

/** One entry of a type list as a spec (the section's and the hostname's conventions applied). */
export function metricSpec(
  m: Record<string, unknown>,
  section: Section,
  type: MetricType,
  pos: SourcePos | null,
): MetricSpec {
  const name = String(m.name);
  const unit = String(m.unit);
  const declared = Array.isArray(m.dimensions) ? m.dimensions.map(String) : [];
  const host = declared.find((d) => HOSTNAME_RE.test(d)) ?? null;
  const dimensions = declared.filter((d) => !HOSTNAME_RE.test(d));
  // TorchServe appends Hostname to every model metric; frontend metrics only get one if declared.
  const hostLabel = host ?? (section === 'model_metrics' ? 'Hostname' : null);
  const help = typeof m.help === 'string' && m.help.trim() !== '' ? m.help.trim() : defaultHelp(name);
  const deprecated = deprecation(m.deprecated);
  const verbatim = m.help_verbatim === true;
  return {
    name,
    ...(typeof m.key === 'string' ? { key: m.key } : {}),
    section,
    type,
    unit,
    dimensions,
    hostLabel,
    help: verbatim ? help : withNotice(help, deprecated),
    ...(verbatim ? { helpVerbatim: true as const } : {}),
    buckets: type === 'histogram' ? buckets(m.buckets, unit) : [],
    pos,
    // Only when declared, so the catalog's JSON of an ordinary metric is unchanged.
    ...(deprecated !== null ? { deprecated } : {}),
    ...(m.hidden === true ? { hidden: true } : {}),
    ...(type === 'gauge' && typeof m.merge === 'string' ? { merge: m.merge as GaugeMerge } : {}),
  };
}

function deprecation(value: unknown): Deprecation | null {
  if (typeof value === 'string') return { since: null, replacement: null, note: value.trim() };
  if (!isRecord(value)) return null;
  return {
    since: typeof value.since === 'string' ? value.since : null,
    replacement: typeof value.replacement === 'string' ? value.replacement : null,
    note: null,
    ...(typeof value.hidden_since === 'string' ? { hiddenSince: value.hidden_since } : {}),
  };
}

function buckets(value: unknown, unit: string): readonly number[] {
  if (Array.isArray(value)) return value.map(Number);
  const preset = typeof value === 'string' ? value : presetForUnit(unit);
  return [...(presetBuckets(preset) ?? [])];
}

function statsd(value: unknown): StatsdConfig {
  const s = isRecord(value) ? value : {};
  return {
    host: typeof s.host === 'string' ? s.host : DEFAULT_STATSD.host,
    port: typeof s.port === 'number' ? s.port : DEFAULT_STATSD.port,
    prefix: typeof s.prefix === 'string' ? s.prefix : DEFAULT_STATSD.prefix,
    tagStyle: s.tag_style === 'telegraf' || s.tag_style === 'none' ? s.tag_style : DEFAULT_STATSD.tagStyle,
    histogramType:
      s.histogram_type === 'h' || s.histogram_type === 'd' ? s.histogram_type : DEFAULT_STATSD.histogramType,
  };
}

function limits(value: unknown): MetricsLimits {
  const max = getAt(value, ['max_series_per_metric']);
  const points = getAt(value, ['max_points_per_flush']);
  const auto = getAt(value, ['max_auto_detected_metrics']);
  const dims = getAt(value, ['max_dimensions_per_metric']);
  return {
    maxSeriesPerMetric: typeof max === 'number' ? max : DEFAULT_LIMITS.maxSeriesPerMetric,
    maxPointsPerFlush: typeof points === 'number' ? points : DEFAULT_LIMITS.maxPointsPerFlush,
    maxAutoDetectedMetrics: typeof auto === 'number' ? auto : DEFAULT_LIMITS.maxAutoDetectedMetrics,
    maxDimensionsPerMetric: typeof dims === 'number' ? dims : DEFAULT_LIMITS.maxDimensionsPerMetric,
  };
}
