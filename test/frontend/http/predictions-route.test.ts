/**
 * `POST /predictions/{model}` on the inference app over a model whose admission is decided in
 * another process (a front's proxy of the primary's model): a refusal that comes back with the
 * outcome is answered and counted as the route's own refusal is, with exact headers and records.
 */
import { expect } from 'chai';
import * as http from 'http';
import type { AddressInfo } from 'net';
import type { Job, JobOutcome } from '../../../frontend/batching/job.js';
import { errorOutcome } from '../../../frontend/batching/job.js';
import type { SubmitResult } from '../../../frontend/batching/batcher.js';
import { inferenceApp } from '../../../frontend/http/inference-app.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import type { ServedModel } from '../../../frontend/models/served-model.js';

/** The ts_* names the route records per model; every record is kept as `name value`. */
const MODEL_METRICS = [
  'ts_inference_requests_total',
  'ts_inference_latency_microseconds',
  'ts_queue_latency_microseconds',
];

function recordingPort(records: string[]): MetricsPort {
  return {
    prometheusContentType: 'text/plain',
    modes: [],
    get: (name): MetricHandle | null =>
      !MODEL_METRICS.includes(name)
        ? null
        : {
            spec: {
              name,
              section: 'ts_metrics',
              type: 'counter',
              unit: 'Count',
              dimensions: ['model_name', 'model_version'],
              hostLabel: 'Hostname',
              help: '',
              buckets: [],
              pos: { line: 1, col: 1 },
            },
            bind: () => ({
              record: (v: number) => {
                records.push(name === 'ts_inference_requests_total' ? `${name} ${v}` : name);
              },
            }),
          },
    byKey: (): MetricHandle | null => null,
    prometheusText: () => Promise.resolve(''),
    close: () => Promise.resolve(),
  };
}

/** A proxy whose submit says 'queued' (sent) and whose outcome comes a turn later, as a front's does. */
class RelayedModel {
  readonly kind = 'batch';
  readonly admitsRemotely = true;
  readonly config = {
    name: 'm',
    version: '1.0',
    dir: '/nonexistent',
    handler: './handler.js',
    modelFile: 'handler.js',
    batchSize: 1,
    maxBatchDelayMs: 0,
    minWorkers: 1,
    maxWorkers: 1,
    responseTimeoutSec: 30,
    threads: 1,
  };
  constructor(private readonly outcome: JobOutcome) {}
  submit(job: Job): SubmitResult {
    setImmediate(() => job.done(this.outcome));
    return 'queued';
  }
}

describe('predictions route over a relayed model', () => {
  let server: http.Server;
  let records: string[];

  async function serve(outcome: JobOutcome): Promise<string> {
    records = [];
    const model = new RelayedModel(outcome);
    const listener = inferenceApp({
      lookup: (n) => (n === 'm' ? (model as unknown as ServedModel) : undefined),
      series: new FrontendSeries(recordingPort(records)),
      maxRequestSizeBytes: 1 << 20,
    });
    server = http.createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('should answer a refusal from the primary as its own, without Server-Timing and uncounted (regression: timed and counted through a front)', async () => {
    const base = await serve({
      ...errorOutcome(503, 'ServiceUnavailableException', 'words from the primary'),
      refused: 'queue_full',
    });
    const r = await fetch(`${base}/predictions/m`, { method: 'POST', body: '[1]' });
    expect([r.status, r.headers.get('server-timing'), await r.text(), records]).to.deep.equal([
      503,
      null,
      '{"code":503,"type":"ServiceUnavailableException","message":"Model \\"m\\" has no worker to serve inference request. Please use scale workers API to add workers. (job queue full)"}',
      [],
    ]);
  });

  it('should count a relayed request the primary admitted once, when its answer comes back', async () => {
    const base = await serve({ status: 200, body: [2], queueUs: 5 });
    const r = await fetch(`${base}/predictions/m`, { method: 'POST', body: '[1]' });
    expect([r.status, await r.text(), records]).to.deep.equal([
      200,
      '[2]',
      ['ts_inference_requests_total 1', 'ts_inference_latency_microseconds', 'ts_queue_latency_microseconds'],
    ]);
  });
});
