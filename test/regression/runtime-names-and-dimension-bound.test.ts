/**
 * Issue 26 items 3 and 4: with model_metrics_auto_detect a handler's
 * `addMetric('process_resident_memory_bytes', …)` was accepted and hid the frontend's real family
 * on /metrics; metrics.yaml took a metric with 10,000 dimensions. Runtime family names are now
 * reserved for declared and auto-detected metrics alike, and dimensions are bounded (default 16).
 */
import { expect } from 'chai';
import * as os from 'node:os';
import { createWorkerMetrics } from '../../backend/metrics/index.js';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { formatProblem, parseMetricsConfig } from '../../schema/config/load.js';
import type { MetricsMessage } from '../../schema/ipc.js';
import { config } from '../backend/metrics/config.js';
import { captureLog, makeConfig, makeSpec } from '../frontend/metrics/make-config.js';

/** The problems of a metrics.yaml text as `FILE:LINE:COL: message` lines. */
function problems(text: string): string[] {
  const r = parseMetricsConfig(text, 'metrics.yaml');
  return r.ok ? [] : r.problems.map(formatProblem);
}

describe('regression: runtime family names and the dimension bound (issue 26 items 3 and 4)', () => {
  it('should drop an auto-detected process_resident_memory_bytes in the worker as invalid_name, with the reason', () => {
    const sent: MetricsMessage[] = [];
    const logs: string[] = [];
    const wm = createWorkerMetrics(config([], { autoDetect: true }), {
      modelName: 'm',
      log: (l) => logs.push(l),
      nowMs: () => 1_700_000_000_000,
      send: (m, cb) => {
        sent.push(m);
        cb();
        return true;
      },
    });
    wm.addMetric('process_resident_memory_bytes', 'Bytes', [], 'gauge').addOrUpdate(1e12);
    wm.addMetric('nodejs_heap_size_used_bytes', 'Bytes', [], 'gauge').addOrUpdate(1);
    wm.flush();
    expect(sent[0]!.metrics).to.deep.equal([]);
    expect(sent[0]!.dropped).to.deep.equal({ invalid_name: 2 });
    expect(logs).to.deep.equal([
      `[METRICS]Metric 'process_resident_memory_bytes' cannot be auto-detected: names starting with "process_" are reserved for the runtime families the Prometheus sink exposes (process and Node.js metrics); rename it (e.g. "resident_memory_bytes"); its datapoints are dropped and counted as invalid_name`,
      `[METRICS]Metric 'nodejs_heap_size_used_bytes' cannot be auto-detected: names starting with "nodejs_" are reserved for the runtime families the Prometheus sink exposes (process and Node.js metrics); rename it (e.g. "heap_size_used_bytes"); its datapoints are dropped and counted as invalid_name`,
    ]);
  });

  it('should refuse the same declaration in the frontend, and /metrics keep the one real process_resident_memory_bytes family', async () => {
    const fm = new FrontendMetrics(
      makeConfig([makeSpec('Requests2XX', 'counter', ['Level'])], { modes: ['prometheus'] }),
      {
        logDir: os.tmpdir(),
        hostname: 'h1',
        log: captureLog().log,
        processMetrics: true,
      },
    );
    const spec = makeSpec('process_resident_memory_bytes', 'gauge', [], { section: 'model_metrics' });
    expect(fm.admit(spec)).to.deep.equal({
      reason: 'invalid_name',
      why: 'process_resident_memory_bytes cannot be auto-detected: names starting with "process_" are reserved for the runtime families the Prometheus sink exposes (process and Node.js metrics); rename it (e.g. "resident_memory_bytes")',
    });
    const text = await fm.prometheusText(undefined, 'text');
    expect(text.split('\n').filter((l) => l.startsWith('# TYPE process_resident_memory_bytes'))).to.deep.equal([
      '# TYPE process_resident_memory_bytes gauge',
    ]);
    await fm.close();
  });

  it('should refuse a declared runtime family name at its file:line:col', () => {
    const text =
      'model_metrics:\n  gauge:\n    - name: process_resident_memory_bytes\n      unit: Bytes\n      dimensions: []\n';
    expect(problems(text)).to.deep.equal([
      'metrics.yaml:3:13: metric "process_resident_memory_bytes" in model_metrics.gauge: names starting with "process_" are reserved for the runtime families the Prometheus sink exposes (process and Node.js metrics); rename it (e.g. "resident_memory_bytes")',
    ]);
  });

  it('should refuse 10,000 dimensions in one line at the 17th, and take 16', () => {
    const dims = (n: number): string => Array.from({ length: n }, (_, i) => `d${i}`).join(', ');
    const yaml = (n: number): string =>
      `model_metrics:\n  counter:\n    - name: wide\n      unit: Count\n      dimensions: [${dims(n)}]\n`;
    expect(problems(yaml(10_000))).to.deep.equal([
      'metrics.yaml:5:90: metric "wide" in model_metrics.counter: 10000 dimensions, more than 16 (limits.max_dimensions_per_metric); each is a label on every series, log line and StatsD packet',
    ]);
    expect(problems(yaml(16))).to.deep.equal([]);
    expect(problems(`limits:\n  max_dimensions_per_metric: 32\n${yaml(20)}`)).to.deep.equal([]);
  });

  it('should drop an auto-detected metric with 17 dimensions as invalid_name', () => {
    const sent: MetricsMessage[] = [];
    const wm = createWorkerMetrics(config([], { autoDetect: true }), {
      modelName: 'm',
      log: () => undefined,
      nowMs: () => 1_700_000_000_000,
      send: (m, cb) => {
        sent.push(m);
        cb();
        return true;
      },
    });
    const names = Array.from({ length: 17 }, (_, i) => `d${i}`);
    wm.addMetric('wide', 'Count', names, 'counter').addOrUpdate(1, names);
    wm.flush();
    expect(sent[0]!.dropped).to.deep.equal({ invalid_name: 1 });
  });

  it('should list at most 100 problems of a file and count the rest in one line', () => {
    const few = Array.from(
      { length: 200 },
      (_, i) => `    - name: m${i}\n      unit: Count\n      dimensions: [a-b]\n`,
    ).join('');
    const many = problems(`model_metrics:\n  counter:\n${few}`);
    expect(many.length).to.equal(101);
    expect(many[100]).to.equal('metrics.yaml:305:20: …(100 more problems)');
  });
});
