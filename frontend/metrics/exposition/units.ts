/** The OpenMetrics `# UNIT` of a family: a base unit its name ends with, else none. */

/** Base units (Prometheus naming conventions) a family name may end with. */
export const BASE_UNITS: readonly string[] = Object.freeze([
  'seconds',
  'bytes',
  'ratio',
  'meters',
  'grams',
  'joules',
  'volts',
  'amperes',
  'celsius',
  'kelvin',
]);

/** `x_seconds` → `seconds`; '' when the family name ends with no base unit. */
export function openMetricsUnit(familyName: string): string {
  for (const u of BASE_UNITS) if (familyName.endsWith('_' + u)) return u;
  return '';
}

/** A counter's OpenMetrics family name: the name without `_total` (its samples add it back). */
export function counterFamilyName(name: string): string {
  return name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
}
