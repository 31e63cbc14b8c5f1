/**
 * Escaping and number formatting of the exposition formats. Label text is escaped once, when a
 * cell is bound; values are formatted at render.
 */

/** `# HELP` text in format 0.0.4: backslash and newline escaped (quotes stay). */
export function escapeHelpText(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** `# HELP` text in OpenMetrics: backslash, newline and double quote escaped. */
export function escapeHelpOpenMetrics(s: string): string {
  return escapeHelpText(s).replace(/"/g, '\\"');
}

/** A label value in either format: backslash, newline and double quote escaped. */
export function escapeLabelValue(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** `a="x",b="y"` for names and values in order (no braces); '' when there are none. */
export function labelPairs(names: readonly string[], values: readonly string[]): string {
  let out = '';
  for (let i = 0; i < names.length; i++) {
    if (i > 0) out += ',';
    out += names[i] + '="' + escapeLabelValue(values[i] as string) + '"';
  }
  return out;
}

/** A sample value: JavaScript's shortest round-trip form, `+Inf`, `-Inf` or `NaN`. */
export function formatValue(v: number): string {
  if (v - v === 0) return '' + v;
  return v !== v ? 'NaN' : v > 0 ? '+Inf' : '-Inf';
}

/**
 * A number as OpenMetrics wants `le` (and `quantile`) label values: Go's `%g` (shortest digits,
 * an exponent below 1e-4 or from 1e6 on, at least two exponent digits) with `.0` appended when
 * that has neither a point nor an exponent (`1.0`, `2000.0`, `1e+06`, `0.005`). A label value is
 * matched as text, so `le="1"` and vLLM's `le="1.0"` were two buckets to `sum by (le)`.
 */
export function canonicalFloat(v: number): string {
  if (v - v !== 0) return formatValue(v);
  if (v === 0) return '0.0';
  const [mantissa, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 6)
    return mantissa + 'e' + (exp < 0 ? '-' : '+') + (Math.abs(exp) < 10 ? '0' : '') + Math.abs(exp);
  const s = '' + v;
  return s.includes('.') ? s : s + '.0';
}
