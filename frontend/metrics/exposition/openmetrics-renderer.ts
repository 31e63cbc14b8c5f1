/**
 * OpenMetrics 1.0 text: `# HELP`, `# TYPE`, `# UNIT` (when the name ends with a base unit);
 * a counter family is named without `_total` and its samples with it; exemplars on counter
 * and bucket samples; `le` values canonical (`1.0`); `# EOF` last.
 */
import { canonicalFloat, escapeHelpOpenMetrics, formatValue } from './escape.js';
import type { ForeignFamily } from './foreign-family.js';
import { counterFamilyName, openMetricsUnit } from './units.js';

/** The content type of OpenMetrics 1.0. */
export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The header lines of a family (no trailing newline); `type` in OpenMetrics' words. */
export function openMetricsHeader(familyName: string, help: string, type: string): string {
  const unit = openMetricsUnit(familyName);
  return (
    '# HELP ' +
    familyName +
    ' ' +
    escapeHelpOpenMetrics(help) +
    '\n# TYPE ' +
    familyName +
    ' ' +
    type +
    (unit === '' ? '' : '\n# UNIT ' + familyName + ' ' + unit)
  );
}

/** The `le` label of a bucket sample's label block (prom-client writes `le="1"`). */
const LE = /(^\{|,)le="([^"]*)"/;

/** A label block with its `le` value written canonically (`1` → `1.0`). */
function canonicalLe(block: string): string {
  return block.replace(LE, (all, before: string, le: string) =>
    le === '+Inf' || Number.isNaN(Number(le)) ? all : `${before}le="${canonicalFloat(Number(le))}"`,
  );
}

/** A foreign family's block (prom-client names its counters with `_total`). */
export function openMetricsForeign(f: ForeignFamily): string {
  const counter = f.type === 'counter';
  const family = counter ? counterFamilyName(f.name) : f.name;
  let out = openMetricsHeader(family, f.help, f.type === 'untyped' ? 'unknown' : f.type);
  for (const s of f.samples) {
    const name = counter && !s.name.endsWith('_total') ? s.name + '_total' : s.name;
    const block = f.type === 'histogram' && name.endsWith('_bucket') ? canonicalLe(s.block) : s.block;
    out += '\n' + name + block + ' ' + formatValue(s.value);
  }
  return out;
}

/** The whole exposition from family blocks, `# EOF` last. */
export function openMetricsDocument(blocks: readonly string[]): string {
  let out = '';
  for (const b of blocks) out += b + '\n';
  return out + '# EOF\n';
}
