import { expect } from 'chai';
import * as os from 'node:os';
import * as path from 'node:path';
import { BatchSizeWindow } from '../../../frontend/status/batch-size-window.js';
import { ChartRing } from '../../../frontend/status/chart-ring.js';
import { HistogramWindow } from '../../../frontend/status/histogram-window.js';
import { StatusSampler } from '../../../frontend/status/status-sampler.js';
import type { DescribedModel, StatusSources } from '../../../frontend/status/status-sampler.js';
import { RateLimit } from '../../../frontend/http/status-routes.js';
import { statusView } from '../../../frontend/status/status-page.js';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { loadMetricsConfig } from '../../../schema/config/load.js';
import type { MetricsConfig } from '../../../schema/types.js';
import { makeConfig, makeSpec } from '../metrics/make-config.js';

/** The repository's metrics.yaml: the families (names, labels, buckets) the server really has. */
function repoConfig(): MetricsConfig {
  const r = loadMetricsConfig(path.join(import.meta.dirname, '..', '..', '..', '..', 'metrics.yaml'));
  if (!r.ok) throw new Error(r.problems.map((p) => p.message).join('; '));
  return r.config;
}

/** A metrics cache with only the prometheus sink, on host `h`. */
function metricsOf(config: MetricsConfig): FrontendMetrics {
  return new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h', modes: ['prometheus'], log: () => {} });
}

/** The sampler's sources over `fm`'s cells, as the server wires them. */
function sources(fm: FrontendMetrics, models: readonly DescribedModel[], now: () => number): StatusSources {
  return {
    describe: () => models,
    cells: fm.cells(),
    familyName: (key) => fm.byKey(key)?.spec.name ?? null,
    modes: ['prometheus', 'statsd'],
    version: '9.9.9',
    nowMs: now,
  };
}

/** The value of the one exposition line that starts with `series ` (the oracle: what /metrics shows). */
function scraped(text: string, series: string): number {
  const lines = text.split('\n').filter((l) => l.startsWith(series + ' '));
  if (lines.length !== 1) throw new Error(`${lines.length} lines of ${series} in:\n${text}`);
  return Number(lines[0]!.slice(series.length + 1));
}

const PREDICT = '/predictions/{model}[/{version}]';

describe('HistogramWindow', () => {
  it("should interpolate the interval's increase within a bucket as Prometheus's histogram_quantile does", () => {
    const fm = metricsOf(
      makeConfig([makeSpec('Lat', 'histogram', ['m'], { buckets: [0.1, 1] })], { modes: ['prometheus'] }),
    );
    const lat = fm.get('Lat')!;
    const w = new HistogramWindow((l) => l.m === 'a');
    lat.addOrUpdate(5, ['a']);
    w.read(fm.cells(), 'Lat');
    expect({ count: w.count, p50: w.quantile(0.5) }).to.deep.equal({ count: 0, p50: null });
    for (const v of [0.05, 0.05, 0.05, 0.05, 0.05, 0.5, 0.5, 0.5, 0.5, 0.5]) lat.addOrUpdate(v, ['a']);
    lat.addOrUpdate(0.05, ['b']);
    w.read(fm.cells(), 'Lat');
    // 10 new in a: 5 at or under 0.1, 5 in (0.1, 1]; the +Inf one came before the first reading.
    expect({ count: w.count, p50: w.quantile(0.5) }).to.deep.equal({ count: 10, p50: 0.1 });
    expect(w.quantile(0.75)).to.be.closeTo(0.55, 1e-12);
    w.read(fm.cells(), 'Lat');
    expect({ count: w.count, p50: w.quantile(0.5) }).to.deep.equal({ count: 0, p50: null });
    lat.addOrUpdate(7, ['a']);
    w.read(fm.cells(), 'Lat');
    // Past the last bound: the highest finite bound, as histogram_quantile answers.
    expect({ count: w.count, p99: w.quantile(0.99) }).to.deep.equal({ count: 1, p99: 1 });
  });
});

describe('ChartRing', () => {
  it('should keep the last N points oldest first, gaps as null, and filter by time', () => {
    const r = new ChartRing(3);
    r.push(1, 10);
    r.push(2, null);
    r.push(3, 30);
    r.push(4, 40);
    expect(r.points()).to.deep.equal([
      [2, null],
      [3, 30],
      [4, 40],
    ]);
    expect(r.points(3)).to.deep.equal([[4, 40]]);
  });
});

describe('BatchSizeWindow', () => {
  it('should count each size among the last N samples, the oldest leaving as new ones come', () => {
    const w = new BatchSizeWindow(3);
    for (const v of [32, 32, 7]) w.push(v);
    expect(w.distribution()).to.deep.equal({ 32: 2, 7: 1 });
    w.push(7);
    w.push(1);
    expect(w.distribution()).to.deep.equal({ 7: 2, 1: 1 });
  });
});

describe('RateLimit', () => {
  it('should allow the rate in a burst, refuse the next, and refill with time', () => {
    let now = 0;
    const l = new RateLimit(3, () => now);
    expect([l.take(), l.take(), l.take(), l.take()]).to.deep.equal([true, true, true, false]);
    now = 334;
    expect([l.take(), l.take()]).to.deep.equal([true, false]);
  });
});

describe('StatusSampler', () => {
  const worker = { id: 'W-1', pid: 42, status: 'READY', startTime: new Date(0).toISOString() };
  const mlp: DescribedModel = {
    modelName: 'mlp',
    modelVersion: '1.0',
    kind: 'batch',
    handler: 'onnx',
    batchSize: 8,
    workers: [worker],
    jobQueueStatus: { remainingCapacity: 99, pendingRequests: 1 },
  };
  const lm: DescribedModel = { ...mlp, modelName: 'lm', kind: 'generation', handler: 'engine', batchSize: 1 };

  it('should show the very figures the exposition shows for the recorded points, read from the cells', async () => {
    const fm = metricsOf(repoConfig());
    const rec = (name: string, value: number, dims: readonly string[]): void =>
      fm.get(name)!.addOrUpdate(value, dims as string[]);
    const byKey = (key: string, value: number, dims: readonly string[]): void =>
      fm.byKey(key)!.addOrUpdate(value, dims as string[]);
    let now = 10_000;
    const s = new StatusSampler(sources(fm, [mlp, lm], () => now));
    // Before the first sample: 3 predictions, one GET /models (not an inference route), 2 TTFTs.
    for (const v of [0.05, 0.3, 2]) rec('http_request_duration_seconds', v, [PREDICT, 'POST']);
    rec('http_request_duration_seconds', 0.05, ['/models', 'GET']);
    for (let i = 0; i < 3; i++) rec('ts_inference_requests_total', 1, ['mlp', '1.0']);
    rec('tsserve_worker_restarts_total', 2, ['mlp']);
    rec('tsserve_sink_errors_total', 3, ['statsd']);
    byKey('llm.time_to_first_token', 0.02, ['lm', '0']);
    byKey('llm.generation_tokens', 100, ['lm', '0']);
    rec('RequestBatchSize', 8, ['mlp']);
    await s.sample();
    // In the next 2 s: 10 predictions (6 ≤ 0.1 s, 3 ≤ 0.5 s, 1 ≤ 1 s), 100 GET /models, 4 TTFTs.
    for (const v of [0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.3, 0.3, 0.3, 0.7])
      rec('http_request_duration_seconds', v, [PREDICT, 'POST']);
    for (let i = 0; i < 100; i++) rec('http_request_duration_seconds', 0.05, ['/models', 'GET']);
    for (let i = 0; i < 10; i++) rec('ts_inference_requests_total', 1, ['mlp', '1.0']);
    for (const v of [0.003, 0.003, 0.03, 0.3]) byKey('llm.time_to_first_token', v, ['lm', '0']);
    byKey('llm.generation_tokens', 50, ['lm', '0']);
    byKey('llm.num_requests_running', 2, ['lm', '0']);
    byKey('llm.num_requests_waiting', 3, ['lm', '0']);
    byKey('llm.num_requests_waiting', 1, ['lm', '1']);
    byKey('llm.kv_cache_usage', 0.25, ['lm', '0']);
    byKey('llm.kv_cache_usage', 0.5, ['lm', '1']);
    byKey('llm.prefix_cache_queries', 100, ['lm', '0']);
    byKey('llm.prefix_cache_hits', 25, ['lm', '0']);
    rec('RequestBatchSize', 4, ['mlp']);
    now = 12_000;
    await s.sample();
    const text = await fm.prometheusText();
    const snap = s.snapshot();
    const [m, g] = snap.models;
    // The table: each figure equals its exposition line.
    expect({ requests: m!.requests, restarts: m!.restarts, errors: snap.sinks[1]!.errors }).to.deep.equal({
      requests: scraped(text, 'ts_inference_requests_total{model_name="mlp",model_version="1.0",hostname="h"}'),
      restarts: scraped(text, 'tsserve_worker_restarts_total{model_name="mlp",Hostname="h"}'),
      errors: scraped(text, 'tsserve_sink_errors_total{sink="statsd",Hostname="h"}'),
    });
    expect({ requests: m!.requests, restarts: m!.restarts, errors: snap.sinks[1]!.errors }).to.deep.equal({
      requests: 13,
      restarts: 2,
      errors: 3,
    });
    expect(snap.sinks[0]).to.deep.equal({ mode: 'prometheus', errors: 0 });
    expect({ gen: m!.generation, batchSizes: m!.batchSizes }).to.deep.equal({ gen: null, batchSizes: { 8: 1, 4: 1 } });
    const run = (series: string): number => scraped(text, `ts_num_requests_running{${series}}`);
    const wait = (series: string): number => scraped(text, `ts_num_requests_waiting{${series}}`);
    const kv = (series: string): number => scraped(text, `ts_kv_cache_usage_ratio{${series}}`);
    const e0 = 'model_name="lm",engine="0"';
    const e1 = 'model_name="lm",engine="1"';
    expect(g!.generation).to.deep.equal({
      running: run(e0),
      waiting: wait(e0) + wait(e1),
      kvUsage: kv(e0) + kv(e1),
      prefixHitRate:
        scraped(text, `ts_prefix_cache_hits_total{${e0}}`) / scraped(text, `ts_prefix_cache_queries_total{${e0}}`),
      tokensPerS: 50 / 2,
    });
    expect(g!.generation).to.deep.equal({ running: 2, waiting: 4, kvUsage: 0.75, prefixHitRate: 0.25, tokensPerS: 25 });
    // The charts: the second's increase of the inference routes' buckets, and its quantiles.
    const bucket = (le: string): number =>
      scraped(text, `http_request_duration_seconds_bucket{le="${le}",handler="${PREDICT}",method="POST"}`);
    expect([bucket('0.1'), bucket('0.5'), bucket('1'), bucket('+Inf')]).to.deep.equal([7, 11, 12, 13]);
    // Increases since the first sample: 6, 9, 10, 10; p50 at rank 5 of 6 in (0, 0.1], p99 at 9.9 in (0.5, 1].
    expect(snap.charts.requestsPerS).to.deep.equal([
      [10, null],
      [12, 5],
    ]);
    expect(snap.charts.latencyP50S).to.deep.equal([
      [10, null],
      [12, Math.round(((0.1 * 5) / 6) * 1e6) / 1e6],
    ]);
    expect(snap.charts.latencyP99S[1]).to.deep.equal([12, 0.95]);
    // TTFT: 4 new, 2 in (0.001, 0.005], 1 in (0.02, 0.04], 1 in (0.25, 0.5]: p50 at rank 2 is 0.005.
    const ttft = (le: string): number =>
      scraped(text, `ts_time_to_first_token_seconds_bucket{le="${le}",model_name="lm",engine="0"}`);
    expect([ttft('0.001'), ttft('0.005'), ttft('0.02'), ttft('0.04'), ttft('0.5')]).to.deep.equal([0, 2, 3, 4, 5]);
    expect([snap.charts.ttftP50S[1], snap.charts.ttftP99S[1]]).to.deep.equal([
      [12, 0.005],
      [12, Math.round((0.25 + (0.25 * (3.96 - 3)) / 1) * 1e6) / 1e6],
    ]);
    expect(snap.charts.itlP50S).to.deep.equal([
      [10, null],
      [12, null],
    ]);
    expect(snap.charts.queueDepth).to.deep.equal([
      [10, 2],
      [12, 2 + wait(e0) + wait(e1)],
    ]);
    expect(snap.charts.kvUsage).to.deep.equal([
      [10, null],
      [12, Math.max(kv(e0), kv(e1))],
    ]);
    expect(statusView(snap)).to.deep.include({
      'models/mlp/workers': 'W-1 pid 42 READY 12s',
      'models/mlp/queue': '1 / 99',
      'models/mlp/requests': '13',
      'sinks/statsd/errors': '3',
    });
    expect(s.snapshot(10).charts.requestsPerS).to.deep.equal([[12, 5]]);
  });

  it('should show the model table without figures when the prometheus sink is off', async () => {
    const s = new StatusSampler({
      ...sources(metricsOf(repoConfig()), [mlp], () => 5000),
      cells: null,
      modes: ['tslog'],
    });
    await s.sample();
    const snap = s.snapshot();
    expect({ on: snap.metricsOn, requests: snap.models[0]!.requests, queue: snap.models[0]!.queue }).to.deep.equal({
      on: false,
      requests: 0,
      queue: { pending: 1, capacity: 99 },
    });
    expect(snap.sinks).to.deep.equal([{ mode: 'tslog', errors: 0 }]);
  });

  it('should sample only while watched, stopping 15 minutes after the last status request', async () => {
    let now = 0;
    let reads = 0;
    const s = new StatusSampler({
      describe: () => (reads++, []),
      cells: null,
      familyName: () => null,
      modes: [],
      version: 'x',
      nowMs: () => now,
    });
    expect({ running: s.running, reads }).to.deep.equal({ running: false, reads: 0 });
    await s.watched();
    expect({ running: s.running, reads }).to.deep.equal({ running: true, reads: 1 });
    now = 15 * 60_000;
    await s.tick();
    expect({ running: s.running, reads }).to.deep.equal({ running: true, reads: 2 });
    now = 15 * 60_000 + 1;
    await s.tick();
    expect({ running: s.running, reads }).to.deep.equal({ running: false, reads: 2 });
    s.stop();
  });
});

describe('the status page of a pipeline model', () => {
  it("should list each stage's model and its replicas' workers in the model's workers cell", async () => {
    const w = (id: string, pid: number): { id: string; pid: number; status: string; startTime: string } => ({
      id,
      pid,
      status: 'READY',
      startTime: new Date(0).toISOString(),
    });
    const s = new StatusSampler({
      describe: () => [
        {
          modelName: 'omni',
          modelVersion: '1.0',
          kind: 'pipeline',
          handler: 'pipeline',
          batchSize: 1,
          workers: [w('W-1', 11), w('W-2', 12), w('W-3', 13)],
          jobQueueStatus: { remainingCapacity: 5, pendingRequests: 0 },
          stages: [
            { stage: 'thinker', model: 'tiny-lm', replicas: 1, workers: [{ ...w('W-1', 11), replica: 0 }] },
            {
              stage: 'code2wav',
              model: 'tiny-vocoder',
              replicas: 2,
              workers: [
                { ...w('W-2', 12), replica: 0 },
                { ...w('W-3', 13), replica: 1 },
              ],
            },
          ],
        },
      ],
      cells: null,
      familyName: () => null,
      modes: ['prometheus'],
      version: 'x',
      nowMs: () => 5000,
    });
    await s.sample();
    expect(statusView(s.snapshot())['models/omni/workers']).to.equal(
      'thinker (tiny-lm, 1 replica): r0 W-1 pid 11 READY 5s; code2wav (tiny-vocoder, 2 replicas): r0 W-2 pid 12 READY 5s, r1 W-3 pid 13 READY 5s',
    );
  });
});
