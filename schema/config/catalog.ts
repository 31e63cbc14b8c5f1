/**
 * Renders the metric catalog of a loaded config as a text table, Markdown (docs/metrics.md)
 * or JSON. Pure functions: the CLI prints them, a test pins docs/metrics.md to them.
 */
import type { MetricSpec, MetricsConfig } from '../types.js';

/** Output formats of `tsserve metrics list`. */
export type CatalogFormat = 'table' | 'json' | 'markdown';

/** The format names, for option parsing and help. */
export const CATALOG_FORMATS: readonly CatalogFormat[] = ['table', 'json', 'markdown'];

/** Dimensions as shown to people: the automatic hostname label last, marked `(auto)`. */
export function dimensionsText(m: MetricSpec): string {
  const dims = m.hostLabel === null ? [...m.dimensions] : [...m.dimensions, `${m.hostLabel} (auto)`];
  return dims.length === 0 ? '-' : dims.join(', ');
}

/** Help as the catalog shows it: the deprecation notice is already first; a hidden metric says so before it. */
export function catalogHelp(m: MetricSpec): string {
  return m.hidden === true ? `(Hidden) ${m.help}` : m.help;
}

/** A short bucket summary for the table: `0.001..2560 (22)`. */
function bucketsShort(m: MetricSpec): string {
  const b = m.buckets;
  if (b.length === 0) return '-';
  return b.length === 1 ? `${b[0]} (1)` : `${b[0]}..${b[b.length - 1]} (${b.length})`;
}

/** A fixed-width text table, one metric a line. */
export function renderTable(config: MetricsConfig): string {
  const head = ['NAME', 'SECTION', 'TYPE', 'UNIT', 'DIMENSIONS', 'BUCKETS', 'HELP'];
  const rows = config.metrics.map((m) => [
    m.name,
    m.section,
    m.type,
    m.unit,
    dimensionsText(m),
    bucketsShort(m),
    catalogHelp(m),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] as number))).join('  ');
  return [line(head), ...rows.map(line)].join('\n') + '\n';
}

/** JSON: the normalized MetricSpec list, as the loader returns it. */
export function renderJson(config: MetricsConfig): string {
  return JSON.stringify(config.metrics, null, 2) + '\n';
}

function cell(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Markdown for docs/metrics.md; `shownFile` names the source without machine-specific paths. */
export function renderMarkdown(config: MetricsConfig, shownFile: string): string {
  const out: string[] = [
    '# Metric catalog',
    '',
    `<!-- Generated from ${shownFile} by \`npm run docs:metrics\` (tsserve metrics list --format markdown). Do not edit by hand: a test compares this file with the generator. -->`,
    '',
    `Every metric declared in \`${shownFile}\` (${config.metrics.length} metrics). The format is described in`,
    '[metrics-yaml.md](metrics-yaml.md). Dimensions marked *(auto)* are filled in with the hostname;',
    'callers never pass them. Default sinks: ' + config.modes.map((m) => `\`${m}\``).join(', ') + '.',
  ];
  const sections: readonly [string, string][] = [
    ['ts_metrics', 'Frontend metrics (`ts_metrics`)'],
    ['model_metrics', 'Model metrics (`model_metrics`)'],
  ];
  for (const [section, title] of sections) {
    const metrics = config.metrics.filter((m) => m.section === section);
    if (metrics.length === 0) continue;
    out.push(
      '',
      `## ${title}`,
      '',
      '| name | section | type | unit | dimensions | help | buckets |',
      '|---|---|---|---|---|---|---|',
    );
    for (const m of metrics) {
      const buckets = m.buckets.length === 0 ? '' : m.buckets.join(', ');
      const dims = dimensionsText(m).replace(/ \(auto\)/, ' *(auto)*');
      out.push(
        `| \`${m.name}\` | ${m.section} | ${m.type} | ${cell(m.unit)} | ${cell(dims)} | ${cell(catalogHelp(m))} | ${buckets} |`,
      );
    }
  }
  return out.join('\n') + '\n';
}

/** Renders in the given format. */
export function renderCatalog(config: MetricsConfig, format: CatalogFormat, shownFile: string): string {
  if (format === 'json') return renderJson(config);
  if (format === 'markdown') return renderMarkdown(config, shownFile);
  return renderTable(config);
}
