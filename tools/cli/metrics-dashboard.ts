/**
 * `tsserve metrics dashboard [--metrics-config F] [--out DIR]` and `tsserve metrics rules
 * [--metrics-config F] [--out FILE]`: Grafana dashboards and Prometheus rules generated from a
 * metrics.yaml (default: the repo's), loaded and resolved as the server loads it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } from '../../schema/config/load.js';
import { packageVersion, resolveStability } from '../../schema/config/stability.js';
import type { MetricsConfig } from '../../schema/types.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import { renderDashboards } from '../dashboards/render.js';
import { renderRules } from '../rules/render.js';
import { notADirectory } from './dir-arg.js';

const USAGE = `Usage:
  tsserve metrics dashboard [--metrics-config FILE] [--out DIR]
      Write the Grafana dashboards tsserve-serving.json, tsserve-generation.json and
      tsserve-pipelines.json into DIR (default: the current directory), generated from FILE
      (default: the repo's metrics.yaml). Import them in Grafana (Dashboards > New > Import).
  tsserve metrics rules [--metrics-config FILE] [--out FILE]
      Print (or write to --out) the Prometheus recording and alerting rules generated from FILE.

Both are described in docs/dashboards.md.
`;

const FLAGS: readonly FlagDef[] = [{ flag: 'metrics-config', kind: 'string' }, { flag: 'out', kind: 'string' }];

function load(file: string | undefined): MetricsConfig | null {
  const r = loadMetricsConfig(file ?? defaultMetricsConfigPath());
  if (!r.ok) {
    process.stderr.write(r.problems.map((p) => formatProblem(p) + '\n').join(''));
    return null;
  }
  // Hidden as this version hides them, so no panel queries a family /metrics does not expose.
  return resolveStability(r.config, { version: process.env.TS_SERVER_VERSION || packageVersion() });
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
  const config = load(last('metrics-config'));
  if (config === null) return Promise.resolve(1);
  const out = last('out');
  // A path that cannot be written is the user's to fix: one line naming it, exit 1, no stack.
  try {
    if (sub === 'rules') {
      const text = renderRules(config);
      if (out === undefined) process.stdout.write(text);
      else {
        // As `dashboard --out DIR` does: a missing directory is created (it was a bare ENOENT).
        if (!fs.existsSync(path.dirname(out))) fs.mkdirSync(path.dirname(out), { recursive: true });
        fs.writeFileSync(out, text);
        process.stdout.write(`wrote ${out}\n`);
      }
      return Promise.resolve(0);
    }
    const dir = out ?? '.';
    const notDir = notADirectory('out', dir, 'the dashboards are three files');
    if (notDir !== null) throw new Error(notDir);
    fs.mkdirSync(dir, { recursive: true });
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
