/** TorchServe's unit shorthands and the unit sets its helpers accept (metric_cache_abstract.py). */

/** TorchServe's `Units` mapping; anything else passes through unchanged. */
const UNIT_NAMES: Readonly<Record<string, string>> = Object.freeze({
  ms: 'Milliseconds',
  s: 'Seconds',
  percent: 'Percent',
  count: 'Count',
  MB: 'Megabytes',
  GB: 'Gigabytes',
  kB: 'Kilobytes',
  B: 'Bytes',
  '': 'unit',
});

/** Maps a TorchServe unit shorthand (`ms`) to its full name (`Milliseconds`); others unchanged. */
export function mapUnit(unit: string): string {
  return Object.prototype.hasOwnProperty.call(UNIT_NAMES, unit) ? UNIT_NAMES[unit] : unit;
}

/** Units `addTime` accepts. */
export type TimeUnit = 'ms' | 's';
/** Units `addSize` accepts. */
export type SizeUnit = 'B' | 'kB' | 'MB' | 'GB';

const TIME_UNITS: ReadonlySet<string> = new Set(['ms', 's']);
const SIZE_UNITS: ReadonlySet<string> = new Set(['MB', 'kB', 'GB', 'B']);

/** True when `addTime` accepts the unit. */
export function isTimeUnit(unit: unknown): unit is TimeUnit {
  return typeof unit === 'string' && TIME_UNITS.has(unit);
}

/** True when `addSize` accepts the unit. */
export function isSizeUnit(unit: unknown): unit is SizeUnit {
  return typeof unit === 'string' && SIZE_UNITS.has(unit);
}

/** TorchServe's message for a bad `add_time` unit, verbatim. */
export const BAD_TIME_UNIT_MESSAGE = "the unit for a timed metric should be one of ['ms', 's']";
/** TorchServe's message for a bad `add_size` unit, verbatim. */
export const BAD_SIZE_UNIT_MESSAGE = "The unit for size based metric is one of ['MB','kB', 'GB', 'B']";
