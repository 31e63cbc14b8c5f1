/**
 * bench:render — time the exposition of 100k series through our cache
 * (`FrontendMetrics.prometheusText(undefined, format)`) against prom-client used directly (a
 * fresh Registry with the same families and series, `registry.metrics()`, in the same content
 * type), for the text format 0.0.4 and for OpenMetrics. Median of several runs each,
 * interleaved in one process after a warm-up. Prints one JSON line per format.
 */
import * as os from 'node:os';
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Registry } from 'prom-client';
import type { OpenMetricsContentType, RegistryContentType } from 'prom-client';
import type { MetricSpec, MetricsConfig } from '../../schema/types.js';
import { FrontendMetrics } from '../../frontend/metrics/frontend-metrics.js';
import { selfMetricSpecs } from '../../schema/config/self-section.js';
import type { ExpositionFormat } from '../../frontend/metrics/exposition/negotiate.js';
import { smoke } from './smoke.js';

const SERIES = smoke(100_000, 1_000);
const RUNS = smoke(7, 1);
const WARMUP = smoke(2, 0);
const LABELS = ['model_name', 'model_version', 'request_kind'] as const;

function labelValues(i: number): [string, string, string] {
  return [`model_${i % 1000}`, `v${Math.floor(i / 1000) % 10}`, `kind_${Math.floor(i / 10000)}`];
}

function spec(): MetricSpec {
  return {
    name: 'bench_requests_total',
    section: 'ts_metrics',
    type: 'counter',
    unit: 'Count',
    dimensions: LABELS,
    hostLabel: null,
    help: 'Requests, for the render benchmark',
    buckets: [],
    pos: null,
  };
}

function config(): MetricsConfig {
  return {
    file: '',
    modes: ['prometheus'],
    statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
    limits: { maxSeriesPerMetric: SERIES * 2, maxPointsPerFlush: 1000 },
    autoDetect: false,
    metrics: [spec()],
  };
}

function buildOurs(): FrontendMetrics {
  const fm = new FrontendMetrics(config(), { logDir: os.tmpdir(), hostname: 'bench-host' });
  const m = fm.get('bench_requests_total');
  if (m === null) throw new Error('bench metric missing');
  for (let i = 0; i < SERIES; i++) m.bind(labelValues(i)).record((i % 7) + 1);
  return fm;
}

/** The same families in a plain prom-client Registry: the self-metrics and the bench counter. */
function buildBaseline(format: ExpositionFormat): Registry<RegistryContentType> {
  const registry: Registry<RegistryContentType> =
    format === 'text' ? new Registry() : new Registry<OpenMetricsContentType>();
  if (format === 'openmetrics') registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  for (const s of selfMetricSpecs()) {
    const labelNames = s.hostLabel === null ? [...s.dimensions] : [...s.dimensions, s.hostLabel];
    const opts = { name: s.name, help: `${s.help} (unit: ${s.unit})`, labelNames, registers: [registry] };
    if (s.type === 'gauge') new Gauge(opts);
    else new Counter(opts);
  }
  const c = new Counter({
    name: 'bench_requests_total',
    help: 'Requests, for the render benchmark (unit: Count)',
    labelNames: [...LABELS],
    registers: [registry],
  });
  for (let i = 0; i < SERIES; i++) {
    const [a, b, k] = labelValues(i);
    c.labels({ model_name: a, model_version: b, request_kind: k }).inc((i % 7) + 1);
  }
  return registry;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

async function bench(ours: FrontendMetrics, format: ExpositionFormat): Promise<string> {
  const baseline = buildBaseline(format);
  const oursText = await ours.prometheusText(undefined, format);
  const baseText = await baseline.metrics();
  // Counter samples keep `_total` in both formats.
  const lines = (t: string): number => t.split('\n').filter((l) => l.startsWith('bench_requests_total{')).length;
  if (lines(oursText) !== SERIES || lines(baseText) !== SERIES) {
    throw new Error(
      `${format}: expected ${SERIES} series in both renders, got ${lines(oursText)} and ${lines(baseText)}`,
    );
  }
  const o: number[] = [];
  const b: number[] = [];
  for (let run = 0; run < WARMUP + RUNS; run++) {
    let t = performance.now();
    // Flattened, as the HTTP response would (a concatenated string is a rope until written).
    Buffer.byteLength(await ours.prometheusText(undefined, format));
    const dOurs = performance.now() - t;
    t = performance.now();
    Buffer.byteLength(await baseline.metrics());
    const dBase = performance.now() - t;
    if (run >= WARMUP) {
      o.push(dOurs);
      b.push(dBase);
    }
  }
  const oursMs = Number(median(o).toFixed(2));
  const baseMs = Number(median(b).toFixed(2));
  return JSON.stringify({
    bench: `render_100k_series_${format}`,
    ours: oursMs,
    baseline: baseMs,
    unit: 'ms',
    ratio: Number((oursMs / baseMs).toFixed(3)),
  });
}

async function main(): Promise<void> {
  const ours = buildOurs();
  console.log(await bench(ours, 'text'));
  console.log(await bench(ours, 'openmetrics'));
  await ours.close();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
