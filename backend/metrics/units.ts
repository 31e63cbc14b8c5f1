/** TorchServe's unit shorthands and the unit sets its helpers accept (metric_cache_abstract.py). */

import { unitKind } from '../../schema/config/units.js';
import { shiftDecimal } from '../../schema/decimal-shift.js';

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

/** Each time unit as a power of ten of seconds, by shorthand and by TorchServe's full name. */
const TIME_EXPONENT: Readonly<Record<string, number>> = Object.freeze({
  ms: -3,
  Milliseconds: -3,
  s: 0,
  Seconds: 0,
  us: -6,
  Microseconds: -6,
  ns: -9,
  Nanoseconds: -9,
});
/** Bytes per size unit (MB = 1024 kB, as TorchServe's system metrics): powers of two, so products are exact. */
const SIZE_BYTES: Readonly<Record<string, number>> = Object.freeze({
  B: 1,
  Bytes: 1,
  kB: 1024,
  Kilobytes: 1024,
  MB: 1024 ** 2,
  Megabytes: 1024 ** 2,
  GB: 1024 ** 3,
  Gigabytes: 1024 ** 3,
});

/**
 * `value` in `from` expressed in `to` when both are time units or both size units (`addTime(0.002,
 * 's')` on a metric declared in ms records 2); undefined when they are not of one kind, and the
 * value is then recorded as given (the yaml's unit wins, as in TorchServe).
 */
export function convertUnit(value: number, from: string, to: string): number | undefined {
  if (from === to) return value;
  // Not a number: recorded as given, so the record drops it as not_finite (arithmetic would
  // coerce '0.5' into 500, or throw on an object that cannot be made a primitive).
  if (typeof value !== 'number') return undefined;
  const f = scaleOf(from);
  const t = scaleOf(to);
  // Shifted on the decimal written (schema/decimal-shift.ts): 0.043 s is 43 ms, not 42.99999999999999.
  if (f.time !== undefined && t.time !== undefined) return shiftDecimal(value, f.time - t.time);
  return f.bytes !== undefined && t.bytes !== undefined ? (value * f.bytes) / t.bytes : undefined;
}

/** What a unit measures, for the helpers: a quantity of one of these is meaningless in another. */
export type Measure = 'time' | 'size' | 'percentage' | 'ratio';

/** The quantity `unit` measures, or undefined for a count or a unit of its own (`CallCount`, `request`). */
export function measureOf(unit: string): Measure | undefined {
  const s = scaleOf(unit);
  if (s.time !== undefined) return 'time';
  if (s.bytes !== undefined) return 'size';
  switch (unitKind(unit)) {
    case 'percent':
      return 'percentage';
    case 'ratio':
      return 'ratio';
    default:
      return undefined;
  }
}

/** A unit as a power of ten of seconds, or as bytes; both undefined when it is neither. */
interface UnitScale {
  readonly time: number | undefined;
  readonly bytes: number | undefined;
}

/**
 * Scales by unit, worked out once: every helper call converts (`count` → `Count`), and working a
 * unit out costs a dozen regex tests. The units seen are the helpers' few and the metrics' own;
 * past MAX_SCALES a unit is worked out on each call instead (slower, same result).
 */
const SCALES = new Map<string, UnitScale>();
const MAX_SCALES = 256;

function scaleOf(unit: string): UnitScale {
  let s = SCALES.get(unit);
  if (s === undefined) {
    const time = timeExponent(unit);
    s = { time, bytes: time === undefined ? sizeBytes(unit) : undefined };
    if (SCALES.size < MAX_SCALES) SCALES.set(unit, s);
  }
  return s;
}

/** Bytes per size unit in any case and spelling the sinks know (`KB`, `KiB`, `megabytes`…). */
function sizeBytes(unit: string): number | undefined {
  const exact = own(SIZE_BYTES, unit);
  if (exact !== undefined) return exact;
  const m = SIZE_SPELLING.exec(unit.trim());
  if (m === null) return undefined;
  const power = m[1] === undefined ? 0 : 'kmgt'.indexOf((m[1] as string).charAt(0).toLowerCase()) + 1;
  return 1024 ** power;
}

const SIZE_SPELLING = /^(?:(k|ki|kilo|m|mi|mega|g|gi|giga|t|ti|tera)(?:b|bytes?)|b|bytes?)$/i;

/**
 * A time unit as a power of ten of seconds, in any spelling the sinks know (`unitKind`: `sec`,
 * `msec`, `µs`, `seconds`…, any case): a metric declared `unit: sec` took `addTime(5, 'ms')` as 5
 * s, and StatsD then sent it as 5000 ms.
 */
function timeExponent(unit: string): number | undefined {
  const exact = own(TIME_EXPONENT, unit);
  if (exact !== undefined) return exact;
  switch (unitKind(unit)) {
    case 'seconds':
      return 0;
    case 'milliseconds':
      return -3;
    case 'microseconds':
      return -6;
    default:
      return NANOSECONDS.test(unit.trim()) ? -9 : undefined;
  }
}

const NANOSECONDS = /^(ns|nsec|nsecs|nanos|nanoseconds?)$/i;

function own(table: Readonly<Record<string, number>>, key: string): number | undefined {
  return Object.prototype.hasOwnProperty.call(table, key) ? table[key] : undefined;
}
