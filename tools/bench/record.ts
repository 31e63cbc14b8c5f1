/**
 * `npm run bench:record`: the cost of one record call in the worker cache against prom-client,
 * measured in the same run. Prints one JSON line per figure (ns/op, lower is better).
 *
 * - record_bound: our `bind([a,b,c]).record(1)` vs prom-client's bound child
 *   `counter.labels(a,b,c).inc()` (the child taken once).
 * - record_labels: dimension values on every call: `metric.addOrUpdate(1, [a,b,c])` vs
 *   `counter.inc({a,b,c}, 1)`.
 * - frontend_record_bound: a record into a bound frontend series (FrontendMetrics with the
 *   prometheus sink: the finite check, then an add into the exposition cell) vs prom-client's
 *   `labels(a,b,c).inc()` child (taken once).
 *
 * Our side includes its share of flushing: the buffer fills to `maxPointsPerFlush` and is sent
 * to a `send` that discards the message, as the IPC channel would take it away.
 */
import { Counter, Registry } from 'prom-client';
import * as os from 'node:os';
import { WorkerMetrics } from '../../backend/metrics/index.js';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import type { MetricsConfig } from '../../schema/types.js';
import { smoke } from './smoke.js';

const CONFIG: MetricsConfig = {
  file: '',
  modes: ['prometheus'],
  statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
  limits: { maxSeriesPerMetric: 10_000, maxPointsPerFlush: 10_000 },
  autoDetect: false,
  metrics: [
    {
      name: 'BenchCount',
      section: 'model_metrics',
      type: 'counter',
      unit: 'Count',
      dimensions: ['a', 'b', 'c'],
      hostLabel: 'Hostname',
      help: '',
      buckets: [],
      pos: null,
    },
  ],
};

/** Median ns/op of `rounds` timed runs of `fn(iterations)`, after a warm-up run. */
export function nsPerOp(fn: (n: number) => void, iterations: number, rounds = smoke(7, 1)): number {
  fn(iterations);
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    fn(iterations);
    samples.push(Number(process.hrtime.bigint() - t0) / iterations);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

function line(bench: string, ours: number, baseline: number): string {
  const r = (x: number): number => Math.round(x * 1000) / 1000;
  return JSON.stringify({
    bench,
    ours: r(ours),
    baseline: r(baseline),
    unit: 'ns/op',
    ratio: r(ours / baseline),
    better: 'lower',
  });
}

function main(): void {
  let sent = 0;
  const wm = new WorkerMetrics(CONFIG, {
    modelName: 'bench',
    send: (m) => {
      sent += m.values.length;
    },
    log: () => undefined,
  });
  const metric = wm.getMetric('BenchCount', 'counter');
  const bound = metric.bind(['x', 'y', 'z']);
  const registry = new Registry();
  const counter = new Counter({
    name: 'bench_count',
    help: 'bench',
    labelNames: ['a', 'b', 'c'],
    registers: [registry],
  });
  const child = counter.labels('x', 'y', 'z');
  const labels = { a: 'x', b: 'y', c: 'z' };
  const dims: readonly string[] = ['x', 'y', 'z'];

  const oursBound = nsPerOp(
    (n) => {
      for (let i = 0; i < n; i++) bound.record(1);
    },
    smoke(5_000_000, 10_000),
  );
  const promBound = nsPerOp(
    (n) => {
      for (let i = 0; i < n; i++) child.inc();
    },
    smoke(2_000_000, 10_000),
  );
  console.log(line('record_bound', oursBound, promBound));

  const oursLabels = nsPerOp(
    (n) => {
      for (let i = 0; i < n; i++) metric.addOrUpdate(1, dims);
    },
    smoke(1_000_000, 10_000),
  );
  const promLabels = nsPerOp(
    (n) => {
      for (let i = 0; i < n; i++) counter.inc(labels, 1);
    },
    smoke(500_000, 10_000),
  );
  console.log(line('record_labels', oursLabels, promLabels));

  const fm = new FrontendMetrics(
    { ...CONFIG, metrics: [{ ...CONFIG.metrics[0]!, section: 'ts_metrics' }] },
    { logDir: os.tmpdir(), hostname: 'bench-host', modes: ['prometheus'] },
  );
  const frontBound = fm.get('BenchCount')!.bind(['x', 'y', 'z']);
  const oursFront = nsPerOp(
    (n) => {
      for (let i = 0; i < n; i++) frontBound.record(1);
    },
    smoke(10_000_000, 10_000),
  );
  const promFront = nsPerOp(
    (n) => {
      for (let i = 0; i < n; i++) child.inc();
    },
    smoke(2_000_000, 10_000),
  );
  console.log(line('frontend_record_bound', oursFront, promFront));

  wm.flush();
  if (sent === 0 || Object.keys(wm.dropped).length !== 0) throw new Error('bench: nothing was recorded');
}

if (process.argv[1] === import.meta.filename) main();
