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

/** Seconds per time unit and bytes per size unit, by shorthand and by TorchServe's full name (MB = 1024 kB, as its system metrics). */
const TIME_SECONDS: Readonly<Record<string, number>> = Object.freeze({
  ms: 1e-3, Milliseconds: 1e-3, s: 1, Seconds: 1, us: 1e-6, Microseconds: 1e-6, ns: 1e-9, Nanoseconds: 1e-9,
});
const SIZE_BYTES: Readonly<Record<string, number>> = Object.freeze({
  B: 1, Bytes: 1, kB: 1024, Kilobytes: 1024, MB: 1024 ** 2, Megabytes: 1024 ** 2, GB: 1024 ** 3, Gigabytes: 1024 ** 3,
});

/**
 * `value` in `from` expressed in `to` when both are time units or both size units (`addTime(0.002,
 * 's')` on a metric declared in ms records 2); undefined when they are not of one kind, and the
 * value is then recorded as given (the yaml's unit wins, as in TorchServe).
 */
export function convertUnit(value: number, from: string, to: string): number | undefined {
  if (from === to) return value;
  for (const table of [TIME_SECONDS, SIZE_BYTES]) {
    const f = Object.prototype.hasOwnProperty.call(table, from) ? table[from] : undefined;
    const t = Object.prototype.hasOwnProperty.call(table, to) ? table[to] : undefined;
    if (f !== undefined && t !== undefined) return (value * f) / t;
  }
  return undefined;
}
