/**
 * The one catalog of the metrics the server's code binds (schema/metric-catalog.ts): every name
 * in it is declared where the server reads it, the self-metrics are the ones the cache creates,
 * and a binding with a misspelt name is a compile error, pinned with the repo's `typescript`.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import ts from 'typescript';
import {
  ENGINE_BINDINGS,
  FRONTEND_BINDINGS,
  PIPELINE_METRICS,
  SELF_METRICS,
  VLLM_OMNI_NAMES,
} from '../../schema/metric-catalog.js';
import { loadMetricsConfig } from '../../schema/config/load.js';
import { selfMetricSpecs } from '../../schema/config/self-section.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');

/** The names and keys a shipped metrics file declares. */
function declared(file: string): { names: Set<string>; keys: Set<string> } {
  const r = loadMetricsConfig(path.join(ROOT, file));
  if (!r.ok) throw new Error(`${file} does not load`);
  return {
    names: new Set(r.config.metrics.map((m) => m.name)),
    keys: new Set(r.config.metrics.flatMap((m) => (m.key === undefined ? [] : [m.key]))),
  };
}

describe('metric catalog', () => {
  it("should have the bundled metrics.yaml's tsserve_metrics section declare exactly the typed SELF_METRICS, as the server records them", () => {
    const declared = selfMetricSpecs().map(
      (s) => `${s.name} ${s.type} ${s.unit} [${s.dimensions.join(', ')}] ${s.hostLabel}`,
    );
    expect(selfMetricSpecs().map((s) => s.name)).to.deep.equal([...SELF_METRICS]);
    expect(declared).to.deep.equal([
      'tsserve_datapoints_dropped_total counter Count [reason] Hostname',
      'tsserve_series gauge Count [metric] Hostname',
      'tsserve_series_overflow_total counter Count [metric] Hostname',
      'tsserve_flush_batches_total counter Count [] Hostname',
      'tsserve_flush_datapoints_total counter Count [] Hostname',
      'tsserve_sink_errors_total counter Count [sink] Hostname',
      'tsserve_worker_restarts_total counter Count [model_name] Hostname',
      'tsserve_front_restarts_total counter Count [] Hostname',
      'tsserve_requests_refused_total counter Count [model_name, reason] Hostname',
      'tsserve_worker_output_faults_total counter Count [model_name, reason] Hostname',
      'tsserve_log_errors_total counter Count [file, reason] Hostname',
      'tsserve_cache_evictions_total counter Count [cache] Hostname',
      'tsserve_spans_dropped_total counter Count [reason] Hostname',
    ]);
  });

  it("should have every frontend metric and pipeline family declared in metrics.yaml, and every engine key and pipeline family (under vLLM-Omni's name) in metrics-vllm.yaml", () => {
    const base = declared('metrics.yaml');
    const vllm = declared('metrics-vllm.yaml');
    expect({
      frontend: Object.keys(FRONTEND_BINDINGS).filter((n) => !base.names.has(n)),
      engine: Object.keys(ENGINE_BINDINGS).filter((k) => !vllm.keys.has(k)),
      pipeline: PIPELINE_METRICS.filter((n) => !base.names.has(n)),
      omni: PIPELINE_METRICS.filter((n) => !vllm.names.has(VLLM_OMNI_NAMES[n])),
    }).to.deep.equal({ frontend: [], engine: [], pipeline: [], omni: [] });
  });

  it('should make a misspelt name in bindOrNoop a compile error naming the catalog type', () => {
    const dir = fs.mkdtempSync(path.join(ROOT, 'dist', 'catalog-typo-'));
    try {
      const file = path.join(dir, 'typo.ts');
      const bind = path.relative(dir, path.join(ROOT, 'frontend/metrics/bind-or-noop.js')).split(path.sep).join('/');
      fs.writeFileSync(
        file,
        `import { bindOrNoop } from '${bind}';\n` +
          `declare const metrics: Parameters<typeof bindOrNoop>[0];\n` +
          `bindOrNoop(metrics, 'Requests2XX', { Level: 'Host' });\n` +
          `bindOrNoop(metrics, 'Requests2xx', { Level: 'Host' });\n`,
      );
      const program = ts.createProgram([file], {
        strict: true,
        noEmit: true,
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        lib: ['lib.es2022.d.ts'],
        types: [],
      });
      const errors = ts.getPreEmitDiagnostics(program).map((d) => {
        const at = d.file?.getLineAndCharacterOfPosition(d.start ?? 0);
        return `${path.basename(d.file?.fileName ?? '')}:${(at?.line ?? 0) + 1} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
      expect(errors).to.deep.equal([
        `typo.ts:4 TS2345: Argument of type '"Requests2xx"' is not assignable to parameter of type 'BoundMetricName'.`,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
