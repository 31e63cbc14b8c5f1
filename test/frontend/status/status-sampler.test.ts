import { expect } from 'chai';
import { bucketsOf, parseExposition, quantile } from '../../../frontend/status/exposition-parse.js';
import { ChartRing } from '../../../frontend/status/chart-ring.js';
import { StatusSampler } from '../../../frontend/status/status-sampler.js';
import type { DescribedModel } from '../../../frontend/status/status-sampler.js';
import { RateLimit } from '../../../frontend/http/status-routes.js';
import { statusView } from '../../../frontend/status/status-page.js';

const hist = (total: number, fast: number): string =>
  [
    '# TYPE http_request_duration_seconds histogram',
    `http_request_duration_seconds_bucket{le="0.1",handler="/predictions/{model}[/{version}]",method="POST"} ${fast}`,
    `http_request_duration_seconds_bucket{le="1",handler="/predictions/{model}[/{version}]",method="POST"} ${total}`,
    `http_request_duration_seconds_bucket{le="+Inf",handler="/predictions/{model}[/{version}]",method="POST"} ${total}`,
    `http_request_duration_seconds_bucket{le="0.1",handler="/models",method="GET"} 50`,
    `http_request_duration_seconds_bucket{le="+Inf",handler="/models",method="GET"} 50`,
    `ts_inference_requests_total{model_name="mlp",model_version="1.0",hostname="h"} ${total}`,
    `tsserve_worker_restarts_total{model_name="mlp",Hostname="h"} 2`,
    `tsserve_sink_errors_total{sink="statsd",Hostname="h"} 3`,
  ].join('\n');

describe('parseExposition and quantile', () => {
  it('should read names, unescaped labels and values, skipping comments', () => {
    expect(parseExposition('# HELP x y\nx{a="q\\"uote",b="n\\\\"} 1.5\ny 2\n')).to.deep.equal([
      { name: 'x', labels: { a: 'q"uote', b: 'n\\' }, value: 1.5 },
      { name: 'y', labels: {}, value: 2 },
    ]);
  });

  it("should interpolate within the bucket as Prometheus's histogram_quantile does", () => {
    const b = bucketsOf(parseExposition(hist(10, 5)), 'http_request_duration_seconds', { method: 'POST' });
    expect(b).to.deep.equal([
      [0.1, 5],
      [1, 10],
      [Infinity, 10],
    ]);
    expect(quantile(0.5, b)).to.equal(0.1);
    expect(quantile(0.75, b)).to.be.closeTo(0.55, 1e-12);
    expect(quantile(0.5, [[Infinity, 0]])).to.equal(null);
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
  const model: DescribedModel = {
    modelName: 'mlp',
    modelVersion: '1.0',
    kind: 'batch',
    handler: 'onnx',
    batchSize: 8,
    workers: [{ id: 'W-1', pid: 42, status: 'READY', startTime: new Date(0).toISOString() }],
    jobQueueStatus: { remainingCapacity: 99, pendingRequests: 1 },
  };

  it('should give requests/s and latency of the inference routes only, from two samples, and the model table', async () => {
    let now = 10_000;
    let text = hist(10, 5);
    const s = new StatusSampler({
      describe: () => [model],
      exposition: () => Promise.resolve(text),
      familyName: () => null,
      modes: ['prometheus', 'statsd'],
      version: '9.9.9',
      nowMs: () => now,
    });
    await s.sample();
    now = 12_000;
    text = hist(30, 25);
    await s.sample();
    const snap = s.snapshot();
    expect(snap.charts.requestsPerS).to.deep.equal([
      [10, null],
      [12, 10],
    ]);
    expect(snap.charts.latencyP50S[1]![1]).to.equal(0.05);
    expect(snap.charts.queueDepth).to.deep.equal([
      [10, 1],
      [12, 1],
    ]);
    expect(snap.models[0]).to.deep.include({ requests: 30, restarts: 2, queue: { pending: 1, capacity: 99 } });
    expect(snap.sinks).to.deep.equal([
      { mode: 'prometheus', errors: 0 },
      { mode: 'statsd', errors: 3 },
    ]);
    expect(statusView(snap)).to.deep.include({
      'models/mlp/workers': 'W-1 pid 42 READY 12s',
      'models/mlp/queue': '1 / 99',
      'models/mlp/requests': '30',
      'sinks/statsd/errors': '3',
    });
    expect(s.snapshot(10).charts.requestsPerS).to.deep.equal([[12, 10]]);
  });

  it('should sample only while watched, stopping 15 minutes after the last status request', async () => {
    let now = 0;
    let reads = 0;
    const s = new StatusSampler({
      describe: () => [],
      exposition: () => (reads++, Promise.resolve('')),
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
      exposition: () => Promise.resolve(''),
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
