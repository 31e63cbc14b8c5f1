/**
 * Number formatting for line protocols: never scientific notation (a StatsD or log parser
 * reading `1e21` as `1` would be silently wrong).
 */

/**
 * Shortest round-trip decimal of `v`, with any exponent expanded (`1e-7` → `0.0000001`), and its
 * decimal point moved `shift` places (`0.0041`, 3 → `4.1`): a unit rescaled by a power of ten in
 * the text, so it is the decimal that was recorded (0.0041 * 1000 is 4.1000000000000005).
 */
export function plainNumber(v: number, shift = 0): string {
  const s = String(v);
  const e = s.indexOf('e');
  if (e < 0 && shift === 0) return s;
  if (v === 0 || v - v !== 0) return s; // 0, NaN, ±Infinity: nothing to move
  const neg = s.charCodeAt(0) === 45; // '-'
  const mant = s.slice(neg ? 1 : 0, e < 0 ? s.length : e);
  const exp = (e < 0 ? 0 : Number(s.slice(e + 1))) + shift;
  const dot = mant.indexOf('.');
  let digits = dot < 0 ? mant : mant.slice(0, dot) + mant.slice(dot + 1);
  let intLen = (dot < 0 ? mant.length : dot) + exp;
  // A shift can leave zeros at either end (`0.0041` → `0004.1`, `1000` → `1.000`).
  while (digits.length > 1 && digits.charCodeAt(0) === 48) {
    digits = digits.slice(1);
    intLen--;
  }
  while (digits.length > Math.max(intLen, 0) && digits.charCodeAt(digits.length - 1) === 48) digits = digits.slice(0, -1);
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
