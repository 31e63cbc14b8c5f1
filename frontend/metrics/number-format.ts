/**
 * Number formatting for line protocols: never scientific notation (a StatsD or log parser
 * reading `1e21` as `1` would be silently wrong).
 */
import { plainNumber } from '../../schema/decimal-shift.js';

// The decimal shift lives in schema/, shared with the workers' unit conversion; the sinks import it from here.
export { plainNumber };

/**
 * Like Java's `Double.toString` for the values TorchServe logs (`1.0`, `84548.829`): always a
 * decimal point, but never an exponent (`1e21` → `1000000000000000000000.0`).
 */
export function decimalWithPoint(v: number): string {
  const s = plainNumber(v);
  return s.indexOf('.') < 0 ? s + '.0' : s;
}
