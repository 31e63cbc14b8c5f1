/** Barrel for the metrics.yaml loader and its helpers. */
export { loadMetricsConfig, parseMetricsConfig, buildMetricsConfig, formatProblem, defaultMetricsConfigPath } from './config/load';
export { BUCKET_PRESETS, BUCKET_PRESET_NAMES, presetForUnit, presetBuckets } from './config/presets';
export { unitKind } from './config/units';
export type { UnitKind } from './config/units';
export { DEFAULT_MODES, parseModeWord } from './config/modes';
export { DEFAULT_STATSD, DEFAULT_LIMITS, defaultHelp } from './config/normalize';
export { METRICS_SCHEMA } from './config/schema-check';
