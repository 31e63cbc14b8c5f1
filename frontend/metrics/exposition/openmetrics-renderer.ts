/**
 * OpenMetrics 1.0 text: `# HELP`, `# TYPE`, `# UNIT` (when the name ends with a base unit);
 * a counter family is named without `_total` and its samples with it; exemplars on counter
 * and bucket samples; `# EOF` last.
 */
import { escapeHelpOpenMetrics, formatValue } from './escape.js';
import type { ForeignFamily } from './foreign-family.js';
import { counterFamilyName, openMetricsUnit } from './units.js';

/** The content type of OpenMetrics 1.0. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The header lines of a family (no trailing newline); `type` in OpenMetrics' words. */
export function openMetricsHeader(familyName: string, help: string, type: string): string {
  const unit = openMetricsUnit(familyName);
  return '# HELP ' + familyName + ' ' + escapeHelpOpenMetrics(help) + '\n# TYPE ' + familyName + ' ' + type
    + (unit === '' ? '' : '\n# UNIT ' + familyName + ' ' + unit);
}

/** A foreign family's block (prom-client names its counters with `_total`). */
export function openMetricsForeign(f: ForeignFamily): string {
  const counter = f.type === 'counter';
  const family = counter ? counterFamilyName(f.name) : f.name;
  let out = openMetricsHeader(family, f.help, f.type === 'untyped' ? 'unknown' : f.type);
  for (const s of f.samples) {
    const name = counter && !s.name.endsWith('_total') ? s.name + '_total' : s.name;
    out += '\n' + name + s.block + ' ' + formatValue(s.value);
  }
  return out;
}

/** The whole exposition from family blocks, `# EOF` last. */
export function openMetricsDocument(blocks: readonly string[]): string {
  let out = '';
  for (const b of blocks) out += b + '\n';
  return out + '# EOF\n';
}
