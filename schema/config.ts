/** Barrel for the metrics.yaml loader and its helpers. */
export {
  loadMetricsConfig,
  parseMetricsConfig,
  buildMetricsConfig,
  formatProblem,
  defaultMetricsConfigPath,
} from './config/load.js';
export { BUCKET_PRESETS, BUCKET_PRESET_NAMES, presetForUnit, presetBuckets } from './config/presets.js';
export { unitKind } from './config/units.js';
export type { UnitKind } from './config/units.js';
export { DEFAULT_MODES, parseModeWord } from './config/modes.js';
export { DEFAULT_STATSD, DEFAULT_LIMITS, defaultHelp } from './config/normalize.js';
export { METRICS_SCHEMA } from './config/schema-check.js';
