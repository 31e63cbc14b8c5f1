/**
 * `tsserve metrics dashboard [--metrics-config F] [--out DIR]` and `tsserve metrics rules
 * [--metrics-config F] [--out FILE]`: Grafana dashboards and Prometheus rules generated from a
 * metrics.yaml (default: the repo's), loaded and resolved as the server loads it, with the
 * server's `--show-hidden-metrics-for-version` so they query what /metrics exposes with it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } from '../../schema/config/load.js';
import { packageVersion, resolveStability, showHiddenProblem } from '../../schema/config/stability.js';
import type { MetricsConfig } from '../../schema/types.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import { renderDashboards } from '../dashboards/render.js';
import { renderRules } from '../rules/render.js';
import { makeDirs, notADirectory } from './dir-arg.js';

const USAGE = `Usage:
  tsserve metrics dashboard [--metrics-config FILE] [--out DIR] [--show-hidden-metrics-for-version X.Y]
      Write the Grafana dashboards tsserve-serving.json, tsserve-generation.json and
      tsserve-pipelines.json into DIR (default: the current directory), generated from FILE
      (default: the repo's metrics.yaml). Import them in Grafana (Dashboards > New > Import).
  tsserve metrics rules [--metrics-config FILE] [--out FILE] [--show-hidden-metrics-for-version X.Y]
      Print (or write to --out) the Prometheus recording and alerting rules generated from FILE.

Metrics hidden in this version (deprecated past their grace) get no panel and no rule, unless
--show-hidden-metrics-for-version names the previous minor version: give it the value the
server runs with, and they query what that server's /metrics exposes.

Both are described in docs/dashboards.md.
`;

const FLAGS: readonly FlagDef[] = [
  { flag: 'metrics-config', kind: 'string' },
  { flag: 'out', kind: 'string' },
  { flag: 'show-hidden-metrics-for-version', kind: 'string' },
];

function load(file: string | undefined, version: string, showHidden: string | null): MetricsConfig | null {
  const r = loadMetricsConfig(file ?? defaultMetricsConfigPath());
  if (!r.ok) {
    process.stderr.write(r.problems.map((p) => formatProblem(p) + '\n').join(''));
    return null;
  }
  // Hidden as the server hides them with the same flag, so no panel queries a family /metrics
  // does not expose, and none it shows again is left out.
  return resolveStability(r.config, { version, showHiddenForVersion: showHidden });
}

/** Entry point for `dashboard` and `rules`; resolves to the exit code. */
export function run(sub: 'dashboard' | 'rules', argv: readonly string[]): Promise<number> {
  const command = `tsserve metrics ${sub}`;
  const parsed = parseFlags(argv, FLAGS, command, 0);
  if (parsed.given.help) {
    process.stdout.write(USAGE);
    return Promise.resolve(0);
  }
  if (parsed.problems.length > 0) {
    process.stderr.write(parsed.problems.map((p) => `${command}: ${p}\n`).join(''));
    return Promise.resolve(2);
  }
  const last = (flag: string): string | undefined => parsed.given.values.get(flag)?.at(-1);
  // The server's version and check (TS_SERVER_VERSION as tsserve start reads it): a value the
  // server refuses at start-up is refused here with its message, before anything is written.
  const version = process.env.TS_SERVER_VERSION || packageVersion();
  const showHidden = last('show-hidden-metrics-for-version') ?? null;
  const badFlag = showHidden === null ? null : showHiddenProblem(version, showHidden);
  if (badFlag !== null) {
    process.stderr.write(`${command}: ${badFlag}\n`);
    return Promise.resolve(2);
  }
  const config = load(last('metrics-config'), version, showHidden);
  if (config === null) return Promise.resolve(1);
  const out = last('out');
  // A path that cannot be written is the user's to fix: one line naming it, exit 1, no stack.
  try {
    if (sub === 'rules') {
      const text = renderRules(config);
      if (out === undefined) process.stdout.write(text);
      else {
        // As `dashboard --out DIR` does: a missing directory is created (it was a bare ENOENT).
        makeDirs(path.dirname(out));
        fs.writeFileSync(out, text);
        process.stdout.write(`wrote ${out}\n`);
      }
      return Promise.resolve(0);
    }
    const dir = out ?? '.';
    const notDir = notADirectory('out', dir, 'the dashboards are three files');
    if (notDir !== null) throw new Error(notDir);
    makeDirs(dir);
    for (const f of renderDashboards(config)) {
      fs.writeFileSync(path.join(dir, f.file), f.text);
      process.stdout.write(`wrote ${path.join(dir, f.file)}\n`);
    }
    return Promise.resolve(0);
  } catch (e) {
    process.stderr.write(`tsserve metrics ${sub}: ${(e as Error).message}\n`);
    return Promise.resolve(1);
  }
}
