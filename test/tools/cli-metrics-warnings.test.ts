/**
 * `tsserve metrics validate` says what `tsserve start` will warn about a file that loads: an
 * engine family declared with other dimensions or another type (start switches it off), a
 * deprecated metric still shown, one hidden at this version; each at its entry's
 * FILE:LINE:COL on stderr, the file still OK (exit 0). A runtime family name
 * (process_cpu_seconds_total) is a reserved name: an error, not a warning.
 */
import { expect } from 'chai';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

// Runs from dist/test/tools.
const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const BIN = path.join(ROOT, 'bin', 'tsserve.js');

function validate(file: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, 'metrics', 'validate', file], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, TS_SERVER_VERSION: '0.1.0' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** 1-based line of the first line of `text` equal to `line`. */
function lineOf(text: string, line: string): number {
  return text.split('\n').indexOf(line) + 1;
}

describe('tsserve metrics validate: start-time warnings', () => {
  let dir: string;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'validate-warnings-'));
  });

  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("should print the vLLM profile's two hidden deprecated families at their entries, and still say OK", () => {
    const text = fs.readFileSync(path.join(ROOT, 'metrics-vllm.yaml'), 'utf8');
    const r = validate('metrics-vllm.yaml');
    const gpu = lineOf(text, '    - name: vllm:gpu_cache_usage_perc');
    const tpot = lineOf(text, '    - name: vllm:time_per_output_token_seconds');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^metrics-vllm\.yaml: OK \(\d+ metrics, 2 warnings\)\n$/);
    expect(r.stderr.split('\n')).to.deep.equal([
      `metrics-vllm.yaml:${gpu}:7: warning: metric vllm:gpu_cache_usage_perc (Deprecated since 0.1, use vllm:kv_cache_usage_perc instead) is hidden at version 0.1.0: not exposed, logged or sent; --show-hidden-metrics-for-version with the previous minor version shows it`,
      `metrics-vllm.yaml:${tpot}:7: warning: metric vllm:time_per_output_token_seconds (Deprecated since 0.1, use vllm:inter_token_latency_seconds instead) is hidden at version 0.1.0: not exposed, logged or sent; --show-hidden-metrics-for-version with the previous minor version shows it`,
      '',
    ]);
  });

  it('should warn that an engine family declared without its engine label is switched off, at its entry', () => {
    const base = fs.readFileSync(path.join(ROOT, 'metrics.yaml'), 'utf8');
    const entry = '    - name: ts_num_requests_running\n      key: llm.num_requests_running\n      unit: Count\n';
    expect(base).to.contain(`${entry}      dimensions: [*llm_model, *engine]\n`);
    const text = base.replace(
      `${entry}      dimensions: [*llm_model, *engine]\n`,
      `${entry}      dimensions: [*llm_model]\n`,
    );
    const file = path.join(dir, 'engine-dims.yaml');
    fs.writeFileSync(file, text);
    const r = validate(file);
    const at = lineOf(text, '    - name: ts_num_requests_running');
    expect(r.code).to.equal(0);
    expect(r.stderr.split('\n')).to.deep.equal([
      `${file}:${at}:7: warning: metric ts_num_requests_running (key llm.num_requests_running) must have dimensions [model_name, engine] (+ the hostname), declared [model_name]; it is switched off`,
      '',
    ]);
    expect(r.stdout).to.match(/: OK \(\d+ metrics, 1 warning\)\n$/);
  });

  it('should warn about a deprecated metric still shown, with its notice', () => {
    const file = path.join(dir, 'deprecated.yaml');
    fs.writeFileSync(
      file,
      [
        'ts_metrics:',
        '  counter:',
        '    - name: old_requests',
        '      unit: Count',
        '      deprecated: {since: "0.1", replacement: new_requests}',
        '    - name: new_requests',
        '      unit: Count',
        '',
      ].join('\n'),
    );
    expect(validate(file)).to.deep.equal({
      code: 0,
      stdout: `${file}: OK (2 metrics, 1 warning)\n`,
      stderr: `${file}:3:7: warning: metric old_requests is deprecated (Deprecated since 0.1, use new_requests instead)\n`,
    });
  });

  it('should refuse a gauge named process_cpu_seconds_total (a runtime family) as an error, exit 1', () => {
    const file = path.join(dir, 'runtime-clash.yaml');
    fs.writeFileSync(file, 'ts_metrics:\n  gauge:\n    - name: process_cpu_seconds_total\n      unit: Count\n');
    expect(validate(file)).to.deep.equal({
      code: 1,
      stdout: '',
      stderr: `${file}:3:13: metric "process_cpu_seconds_total" in ts_metrics.gauge: names starting with "process_" are reserved for the runtime families the Prometheus sink exposes (process and Node.js metrics); rename it (e.g. "cpu_seconds_total")\n`,
    });
  });
});
