/**
 * A number's decimal point moved by a power of ten, on the decimal that was written (its
 * shortest round-trip form), not by binary multiplication: 0.0041 s is 4.1 ms, where
 * 0.0041 * 1000 is 4.1000000000000005. Shared by the frontend, which prints rescaled values
 * in the StatsD and tslog text, and the workers, which convert a helper's unit to the yaml's
 * (`addTime(0.043, 's')` on a metric in ms records 43), so the two can never round apart.
 */

/**
 * Shortest round-trip decimal of `v`, with any exponent expanded (`1e-7` → `0.0000001`), and its
 * decimal point moved `shift` places (`0.0041`, 3 → `4.1`): never scientific notation, which a
 * StatsD or log parser reading `1e21` as `1` would get silently wrong. 0 and -0 print `0`; NaN
 * and ±Infinity print as `String(v)` (nothing to move).
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
  while (digits.length > Math.max(intLen, 0) && digits.charCodeAt(digits.length - 1) === 48)
    digits = digits.slice(0, -1);
  let out: string;
  if (intLen <= 0) out = '0.' + '0'.repeat(-intLen) + digits;
  else if (intLen >= digits.length) out = digits + '0'.repeat(intLen - digits.length);
  else out = digits.slice(0, intLen) + '.' + digits.slice(intLen);
  return neg ? '-' + out : out;
}

/**
 * `v` × 10^`k` as the number `plainNumber(v, k)` reads as (0.043, 3 → 43; 1234, -3 → 1.234):
 * the nearest double to the shifted decimal. 0 and -0 (as multiplying keeps its sign), NaN and
 * ±Infinity come back unchanged, so a record still drops a non-finite value as not_finite.
 */
export function shiftDecimal(v: number, k: number): number {
  return k === 0 || v === 0 || v - v !== 0 ? v : Number(plainNumber(v, k));
}
