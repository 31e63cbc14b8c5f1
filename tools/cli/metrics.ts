/**
 * `tsserve metrics validate FILE...` and `tsserve metrics list [FILE] [--format ...]`:
 * check a metrics.yaml with the server's own loader, and print the metric catalog; the other
 * subcommands (tail, dashboard, rules, types) live in their own files.
 */
import * as path from 'path';
import type { CatalogFormat } from '../../schema/config/catalog.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';

// The loader (ajv, js-yaml), the catalog and the frontend checks are imported by the
// subcommands that use them: `metrics tail` and `metrics --help` start without them.

const USAGE = `Usage:
  tsserve metrics validate FILE [FILE...]
      Check metrics.yaml files. Prints "FILE: OK (N metrics)" and exits 0, or prints one
      "FILE:LINE:COL: message" line per problem to stderr and exits 1.
  tsserve metrics list [FILE] [--format table|json|markdown]
      Print the metric catalog (default FILE: the repo's metrics.yaml; default format: table).
      Columns: name, section, type, unit, dimensions ("(auto)" marks the hostname label),
      buckets, help. \`npm run docs:metrics\` writes the markdown to docs/metrics.md.
  tsserve metrics tail [--log-dir DIR] [--metric NAME] [--request ID] [--once] [--json] ...
      Follow ts_metrics.log and model_metrics.log: a live table per metric and series, or JSON
      lines (see tsserve metrics tail --help).
  tsserve metrics dashboard [--metrics-config FILE] [--out DIR] [--show-hidden-metrics-for-version X.Y]
      Write the Grafana dashboards generated from FILE into DIR (docs/dashboards.md).
  tsserve metrics rules [--metrics-config FILE] [--out FILE] [--show-hidden-metrics-for-version X.Y]
      Print the Prometheus recording and alerting rules generated from FILE.
  tsserve metrics types [--metrics-config FILE] [--out FILE]
      Print (or write) the .d.ts typing a handler's context.metrics by FILE's model metrics.

Format reference: docs/metrics-yaml.md
`;

const LIST_FLAGS: readonly FlagDef[] = [{ flag: 'format', kind: 'string' }];

/** Entry point called by the dispatcher; resolves to the exit code. */
export async function run(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) {
    process.stderr.write(USAGE);
    return 2;
  }
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (sub === 'tail') return (await import('./metrics-tail.js')).run(rest);
  if (sub === 'types') return (await import('./metrics-types.js')).run(rest);
  if (sub === 'dashboard' || sub === 'rules') return (await import('./metrics-dashboard.js')).run(sub, rest);
  if (sub !== 'validate' && sub !== 'list') {
    process.stderr.write(`tsserve metrics: unknown subcommand '${sub}'\n\n${USAGE}`);
    return 2;
  }
  const command = `tsserve metrics ${sub}`;
  const parsed = parseFlags(rest, sub === 'list' ? LIST_FLAGS : [], command, Infinity);
  if (parsed.given.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed.problems.length > 0) {
    process.stderr.write(parsed.problems.map((p) => `${command}: ${p}\n`).join(''));
    return 2;
  }
  if (sub === 'validate') return validate(parsed.given.positionals);
  return list(parsed.given.positionals, parsed.given.values.get('format'));
}

async function validate(files: readonly string[]): Promise<number> {
  if (files.length === 0) {
    process.stderr.write(`tsserve metrics validate: FILE is required\n\n${USAGE}`);
    return 2;
  }
  const { formatProblem, loadMetricsConfig } = await import('../../schema/config/load.js');
  const { checkFrontendMetrics, specLookup } = await import('../../frontend/models/frontend-series.js');
  const { formatWarning, startWarnings } = await import('./metrics-warnings.js');
  const { packageVersion } = await import('../../schema/config/stability.js');
  const version = process.env.TS_SERVER_VERSION || packageVersion();
  let code = 0;
  for (const file of files) {
    const r = loadMetricsConfig(file);
    // Every check `tsserve start` makes on the file: the frontend metrics' types and dimensions too.
    const wrong = r.ok ? checkFrontendMetrics(specLookup(r.config)) : [];
    if (r.ok && wrong.length === 0) {
      // What start would warn about (it runs, with these families off or hidden): not a failure.
      const warnings = startWarnings(r.config, version);
      process.stderr.write(warnings.map((w) => formatWarning(file, w) + '\n').join(''));
      const n = warnings.length;
      const noted = n === 0 ? '' : `, ${n} warning${n === 1 ? '' : 's'}`;
      process.stdout.write(`${file}: OK (${r.config.metrics.length} metrics${noted})\n`);
    } else if (r.ok) {
      process.stderr.write(wrong.map((w) => `${file}:${w}\n`).join(''));
      code = 1;
    } else {
      process.stderr.write(r.problems.map((p) => formatProblem(p) + '\n').join(''));
      code = 1;
    }
  }
  return code;
}

async function list(files: readonly string[], formats: readonly string[] | undefined): Promise<number> {
  const { CATALOG_FORMATS, renderCatalog } = await import('../../schema/config/catalog.js');
  const { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } = await import('../../schema/config/load.js');
  const { packageVersion, resolveStability } = await import('../../schema/config/stability.js');
  let format: CatalogFormat = 'table';
  if (formats !== undefined) {
    const value = formats[formats.length - 1];
    if (value === undefined || !(CATALOG_FORMATS as readonly string[]).includes(value)) {
      process.stderr.write(`tsserve metrics list: --format must be one of ${CATALOG_FORMATS.join(', ')}\n`);
      return 2;
    }
    format = value as CatalogFormat;
  }
  if (files.length > 1) {
    process.stderr.write(`tsserve metrics list: at most one FILE\n\n${USAGE}`);
    return 2;
  }
  const file = files[0] ?? defaultMetricsConfigPath();
  const r = loadMetricsConfig(file);
  if (!r.ok) {
    process.stderr.write(r.problems.map((p) => formatProblem(p) + '\n').join(''));
    return 1;
  }
  // The default file is named by its basename so the generated docs do not depend on the checkout path.
  const shown = files[0] ?? path.basename(file);
  // Hidden as this version hides them (a deprecation past its grace), so the catalog matches /metrics.
  const version = process.env.TS_SERVER_VERSION || packageVersion();
  process.stdout.write(renderCatalog(resolveStability(r.config, { version }), format, shown));
  return 0;
}
