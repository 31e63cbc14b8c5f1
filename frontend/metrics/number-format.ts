/**
 * Number formatting for line protocols: never scientific notation (a StatsD or log parser
 * reading `1e21` as `1` would be silently wrong).
 */

/** Shortest round-trip decimal of `v`, with any exponent expanded (`1e-7` → `0.0000001`). */
export function plainNumber(v: number): string {
  const s = String(v);
  const e = s.indexOf('e');
  if (e < 0) return s;
  const neg = s.charCodeAt(0) === 45; // '-'
  const mant = s.slice(neg ? 1 : 0, e);
  const exp = Number(s.slice(e + 1));
  const dot = mant.indexOf('.');
  const digits = dot < 0 ? mant : mant.slice(0, dot) + mant.slice(dot + 1);
  const intLen = (dot < 0 ? mant.length : dot) + exp;
  let out: string;
  if (intLen <= 0) out = '0.' + '0'.repeat(-intLen) + digits;
  else if (intLen >= digits.length) out = digits + '0'.repeat(intLen - digits.length);
  else out = digits.slice(0, intLen) + '.' + digits.slice(intLen);
  return neg ? '-' + out : out;
}

/**
 * Like Java's `Double.toString` for the values TorchServe logs (`1.0`, `84548.829`): always a
 * decimal point, but never an exponent (`1e21` → `1000000000000000000000.0`).
 */
export function decimalWithPoint(v: number): string {
  const s = plainNumber(v);
  return s.indexOf('.') < 0 ? s + '.0' : s;
}
