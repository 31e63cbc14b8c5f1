/**
 * BENCH_SMOKE=1 (CI's pass over every `bench:*` script): each bench runs a few iterations of
 * every figure and still prints its JSON lines, so a bench that breaks at head fails CI, but no
 * figure from such a run means anything.
 */

/** True when the bench runs in CI's smoke mode (BENCH_SMOKE=1). */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** `full` in a real run, `small` in smoke mode. */
export function smoke<T>(full: T, small: T): T {
  return SMOKE ? small : full;
}
