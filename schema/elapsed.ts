/**
 * Elapsed times as recorded in metrics: `performance.now()` differences rounded to whole
 * nanoseconds, the finest the clock can mean. An unrounded difference carries binary noise
 * (`9453.808000000208` µs) that reads as false precision in every log line and costs a
 * longer shortest-round-trip format on every record; rounded it is `9453.808`.
 */

/** `ms` milliseconds rounded to whole nanoseconds, still in milliseconds (not a conversion to ns). */
export function roundToNs(ms: number): number {
  return Math.round(ms * 1e6) / 1e6;
}

/** `ms` milliseconds rounded to whole nanoseconds, in microseconds. */
export function msAsUs(ms: number): number {
  return Math.round(ms * 1e6) / 1e3;
}

/** `ms` milliseconds rounded to whole nanoseconds, in seconds. */
export function msAsSeconds(ms: number): number {
  return Math.round(ms * 1e6) / 1e9;
}
