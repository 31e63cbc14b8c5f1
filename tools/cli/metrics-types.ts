/**
 * `tsserve metrics types [--metrics-config FILE] [--out FILE]`: the `.d.ts` that types a
 * handler's `context.metrics` by a metrics.yaml's model metrics (schema/config/handler-types.ts).
 */
import * as fs from 'fs';
import * as path from 'path';
import { defaultMetricsConfigPath, formatProblem, loadMetricsConfig } from '../../schema/config/load.js';
import { renderHandlerTypes } from '../../schema/config/handler-types.js';
import type { FlagDef } from '../../frontend/server/flags.js';
import { parseFlags } from '../../frontend/server/flags.js';
import { makeDirs } from './dir-arg.js';

const USAGE = `Usage:
  tsserve metrics types [--metrics-config FILE] [--out FILE]
      Print (or write to --out) a TypeScript declaration file typing a handler's
      context.metrics by FILE's model_metrics (default FILE: the repo's metrics.yaml). In the
      handler: \`const metrics: ModelMetrics = context.metrics;\` then an unknown metric name, a
      missing or extra dimension, or another type than the declared one is a compile error.
      With model_metrics_auto_detect: true, undeclared names are accepted as the worker accepts them.
`;

const FLAGS: readonly FlagDef[] = [
  { flag: 'metrics-config', kind: 'string' },
  { flag: 'out', kind: 'string' },
];

/** Entry point called by `tsserve metrics`; resolves to the exit code. */
export function run(argv: readonly string[]): number {
  const command = 'tsserve metrics types';
  const parsed = parseFlags(argv, FLAGS, command, 0);
  if (parsed.given.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (parsed.problems.length > 0) {
    process.stderr.write(parsed.problems.map((p) => `${command}: ${p}\n`).join(''));
    return 2;
  }
  const last = (flag: string): string | undefined => parsed.given.values.get(flag)?.at(-1);
  const given = last('metrics-config');
  const file = given ?? defaultMetricsConfigPath();
  const r = loadMetricsConfig(file);
  if (!r.ok) {
    process.stderr.write(r.problems.map((p) => formatProblem(p) + '\n').join(''));
    return 1;
  }
  // Named as given (the default by its basename), so the file does not depend on the checkout path.
  const text = renderHandlerTypes(r.config, given ?? path.basename(file));
  const out = last('out');
  if (out === undefined) {
    process.stdout.write(text);
    return 0;
  }
  try {
    makeDirs(path.dirname(out));
    fs.writeFileSync(out, text);
  } catch (e) {
    process.stderr.write(`${command}: ${(e as Error).message}\n`);
    return 1;
  }
  process.stdout.write(`wrote ${out}\n`);
  return 0;
}
