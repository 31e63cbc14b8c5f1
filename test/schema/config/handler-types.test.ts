/**
 * `tsserve metrics types`: the `.d.ts` written from a metrics.yaml makes a handler's metric
 * typo a compile error. Each test compiles a handler against a generated file with the repo's
 * `typescript` package and pins the compiler's exact messages.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import ts from 'typescript';
import { renderHandlerTypes } from '../../../schema/config/handler-types.js';
import { loadMetricsConfig } from '../../../schema/config/load.js';
import type { MetricSpec, MetricsConfig } from '../../../schema/types.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..');

function spec(name: string, type: MetricSpec['type'], unit: string, dimensions: string[]): MetricSpec {
  return {
    name,
    section: 'model_metrics',
    type,
    unit,
    dimensions,
    hostLabel: 'Hostname',
    help: '',
    buckets: [],
    pos: null,
  };
}

/** A yaml's worth of model metrics (and a frontend one, which a handler may not name). */
function config(autoDetect: boolean): MetricsConfig {
  return {
    file: 'metrics.yaml',
    modes: ['prometheus'],
    statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
    limits: { maxSeriesPerMetric: 100, maxPointsPerFlush: 100 },
    autoDetect,
    metrics: [
      { ...spec('Requests2XX', 'counter', 'Count', ['Level']), section: 'ts_metrics' },
      spec('CacheHits', 'counter', 'count', ['ModelName', 'Level']),
      spec('StageTime', 'gauge', 'ms', ['Stage', 'ModelName']),
      spec('Plain', 'counter', 'count', []),
    ],
  };
}

/** Compiles `handler` beside the generated `metrics.d.ts`; one `line:col TSnnnn: message` per error. */
function compile(types: string, handler: string): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-types-'));
  try {
    fs.writeFileSync(path.join(dir, 'metrics.d.ts'), types);
    fs.writeFileSync(path.join(dir, 'handler.ts'), handler);
    const program = ts.createProgram([path.join(dir, 'handler.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ES2022,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts'],
      types: [],
    });
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const at = d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
      const where = at === null ? '' : `${at.line + 1}:${at.character + 1} `;
      return `${where}TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const HEADER = `import type { ModelMetrics } from './metrics.js';\ndeclare const metrics: ModelMetrics;\n`;

describe('renderHandlerTypes (tsserve metrics types)', () => {
  const types = renderHandlerTypes(config(false), 'metrics.yaml');

  it('should compile a handler that records every declared metric as declared, without an error', () => {
    const handler =
      HEADER +
      `metrics.addMetric('CacheHits', 'count', ['Level', 'ModelName'], 'counter').addOrUpdate(1, { ModelName: 'm', Level: 'Model' });\n` +
      `metrics.getMetric('StageTime', 'gauge').addOrUpdate(2, ['pre', 'm'], 'req-1');\n` +
      `metrics.getMetric('Plain').addOrUpdate(1);\n` +
      `metrics.getMetric('StageTime').bind({ Stage: 'pre', ModelName: 'm' }).record(3);\n` +
      `metrics.addCounter('CacheHits', 1);\n` +
      `metrics.addTime('StageTime', 0.5, 0, 's', { Stage: 'pre' });\n`;
    expect(compile(types, handler)).to.deep.equal([]);
  });

  it('should make a misspelt name, a missing dimension, an unknown dimension and another type compile errors', () => {
    const handler =
      HEADER +
      `metrics.getMetric('CacheHit');\n` +
      `metrics.addMetric('CacheHits', 'count', ['ModelName'], 'counter');\n` +
      `metrics.getMetric('StageTime').addOrUpdate(1, { Stage: 'pre' });\n` +
      `metrics.getMetric('StageTime').addOrUpdate(1, { Stage: 'pre', ModelName: 'm', Level: 'x' });\n` +
      `metrics.getMetric('StageTime', 'counter');\n` +
      `metrics.addCounter('StageTime', 1);\n` +
      `metrics.getMetric('Requests2XX');\n`;
    expect(compile(types, handler)).to.deep.equal([
      `3:19 TS2345: Argument of type '"CacheHit"' is not assignable to parameter of type 'keyof DeclaredModelMetrics'.`,
      `4:41 TS2345: Argument of type '["ModelName"]' is not assignable to parameter of type 'readonly ["ModelName" | "Level", "ModelName" | "Level"]'.\n  Source has 1 element(s) but target requires 2.`,
      `5:47 TS2345: Argument of type '{ Stage: string; }' is not assignable to parameter of type '{ readonly ModelName: string; readonly Stage: string; } | readonly [string, string]'.\n  Property 'ModelName' is missing in type '{ Stage: string; }' but required in type '{ readonly ModelName: string; readonly Stage: string; }'.`,
      `6:79 TS2353: Object literal may only specify known properties, and 'Level' does not exist in type '{ readonly ModelName: string; readonly Stage: string; } | readonly [string, string]'.`,
      `7:32 TS2345: Argument of type '"counter"' is not assignable to parameter of type '"gauge"'.`,
      `8:20 TS2345: Argument of type '"StageTime"' is not assignable to parameter of type 'CounterName'.`,
      `9:19 TS2345: Argument of type '"Requests2XX"' is not assignable to parameter of type 'keyof DeclaredModelMetrics'.`,
    ]);
  });

  it('should accept an undeclared name when the yaml turns auto-detect on, as the worker does', () => {
    const handler =
      HEADER +
      `metrics.addMetric('Undeclared', 'ms', ['Stage'], 'gauge').addOrUpdate(1, ['pre']);\n` +
      `metrics.addTime('OtherTime', 1, undefined, 'ms', { Stage: 'pre' });\n` +
      `metrics.getMetric('StageTime', 'counter');\n`;
    expect(compile(renderHandlerTypes(config(true), 'metrics.yaml'), handler)).to.deep.equal([
      `5:32 TS2345: Argument of type '"counter"' is not assignable to parameter of type '"gauge"'.`,
    ]);
  });

  it('should be what examples/custom-metrics/metrics.d.ts holds, as `tsserve metrics types` prints it', () => {
    const yaml = 'examples/custom-metrics/metrics.yaml';
    const r = loadMetricsConfig(path.join(ROOT, yaml));
    if (!r.ok) throw new Error(`${yaml} does not load`);
    const printed = spawnSync(process.execPath, ['bin/tsserve.js', 'metrics', 'types', '--metrics-config', yaml], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(printed.status, printed.stderr).to.equal(0);
    expect(printed.stdout).to.equal(renderHandlerTypes(r.config, yaml));
    expect(fs.readFileSync(path.join(ROOT, 'examples/custom-metrics/metrics.d.ts'), 'utf8')).to.equal(printed.stdout);
  });
});
