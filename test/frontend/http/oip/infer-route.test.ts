/**
 * `POST /v2/models/{m}/infer` on the inference app over a fake queued model: how an inference's
 * rows meet the model's job queue, with exact answers and exact submissions.
 */
import { expect } from 'chai';
import * as http from 'http';
import type { AddressInfo } from 'net';
import type { Job } from '../../../../frontend/batching/job.js';
import type { SubmitResult } from '../../../../frontend/batching/batcher.js';
import { inferenceApp } from '../../../../frontend/http/inference-app.js';
import { traceIds } from '../../../../frontend/metrics/exposition/trace-ids.js';
import { FrontendSeries } from '../../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../../frontend/models/metrics-port.js';
import type { ModelDescription, ServedModel } from '../../../../frontend/models/served-model.js';

/** Records `name{dims} value` per record call of tsserve_requests_refused_total; every other series a no-op. */
function refusalsPort(records: string[]): MetricsPort {
  return {
    prometheusContentType: 'text/plain',
    modes: [],
    get: (name): MetricHandle | null =>
      name !== 'tsserve_requests_refused_total'
        ? null
        : {
            spec: {
              name,
              section: 'ts_metrics',
              type: 'counter',
              unit: 'Count',
              dimensions: ['model_name', 'reason'],
              hostLabel: 'Hostname',
              help: '',
              buckets: [],
              pos: { line: 1, col: 1 },
            },
            bind: (dims) => ({
              record: (v: number) => {
                if (v !== 0) records.push(`${name}${JSON.stringify(dims)} ${v}`);
              },
            }),
          },
    byKey: (): MetricHandle | null => null,
    prometheusText: () => Promise.resolve(''),
    close: () => Promise.resolve(),
  };
}

/** A user-handler model whose queue holds `capacity` jobs; each admitted job is answered `[row[0] * 2]`. */
class QueuedModel {
  readonly kind = 'batch';
  readonly submitted: unknown[] = [];
  queued = 0;
  readonly config = {
    name: 'echo',
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
  constructor(readonly capacity: number) {}
  submit(job: Job): SubmitResult {
    if (this.queued >= this.capacity) return 'queue_full';
    this.queued++;
    this.submitted.push(job.body);
    setImmediate(() => {
      this.queued--;
      job.done({ status: 200, body: [(job.body as number[])[0]! * 2], queueUs: 1 });
    });
    return 'queued';
  }
  describes = 0;
  describe(): ModelDescription {
    this.describes++;
    return {
      modelName: 'echo',
      modelVersion: '1.0',
      modelUrl: 'echo',
      handler: './handler.js',
      kind: 'batch',
      minWorkers: 1,
      maxWorkers: 1,
      batchSize: 1,
      maxBatchDelay: 0,
      responseTimeout: 30,
      loadedAtStartup: true,
      workers: [],
      jobQueueStatus: { remainingCapacity: this.capacity - this.queued, pendingRequests: this.queued },
    };
  }
}

describe('OIP infer route and the job queue', () => {
  let server: http.Server;
  let base = '';
  let model: QueuedModel;
  let refusals: string[];

  beforeEach(async () => {
    model = new QueuedModel(4);
    refusals = [];
    const listener = inferenceApp({
      lookup: (n) => (n === 'echo' ? (model as unknown as ServedModel) : undefined),
      series: new FrontendSeries(refusalsPort(refusals)),
      maxRequestSizeBytes: 1 << 20,
    });
    server = http.createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function infer(rows: number, extra: Record<string, unknown> = {}): Promise<{ status: number; body: unknown }> {
    const body = JSON.stringify({
      inputs: [{ name: 'x', shape: [rows, 1], datatype: 'FP32', data: Array.from({ length: rows }, (_, i) => i) }],
      ...extra,
    });
    const r = await fetch(`${base}/v2/models/echo/infer`, { method: 'POST', body });
    return { status: r.status, body: JSON.parse(await r.text()) as unknown };
  }

  it('should answer every row when the queue holds them all', async () => {
    expect(await infer(4)).to.deep.equal({
      status: 200,
      body: {
        model_name: 'echo',
        model_version: '1.0',
        outputs: [{ name: 'output0', shape: [4, 1], datatype: 'FP32', data: [0, 2, 4, 6] }],
      },
    });
  });

  it("should answer a one-row request without describing the model (regression: every request built the model's worker table to read its queue)", async () => {
    expect(await infer(1)).to.deep.equal({
      status: 200,
      body: {
        model_name: 'echo',
        model_version: '1.0',
        outputs: [{ name: 'output0', shape: [1, 1], datatype: 'FP32', data: [0] }],
      },
    });
    expect(model.describes).to.equal(0);
    await infer(2);
    expect(model.describes).to.equal(1);
  });

  it("should carry a request's W3C trace id to each of its rows' job ids, which exemplars look up (regression: only the request id had it)", async () => {
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const r = await fetch(`${base}/v2/models/echo/infer`, {
      method: 'POST',
      headers: { traceparent },
      body: JSON.stringify({ inputs: [{ name: 'x', shape: [2, 1], datatype: 'FP32', data: [1, 2] }] }),
    });
    expect(r.status).to.equal(200);
    const id = r.headers.get('x-request-id')!;
    expect([
      traceIds.get(id),
      traceIds.get(`${id}-0`),
      traceIds.get(`${id}-1`),
      traceIds.get(`${id}-0,${id}-1`),
    ]).to.deep.equal(Array(4).fill('4bf92f3577b34da6a3ce929d0e0e4736'));
  });

  it('should say a model without metadata declares no datatype when refusing one (regression: "does not match the model\'s FP32", a datatype it never declared)', async () => {
    const r = await fetch(`${base}/v2/models/echo/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'x', shape: [1, 1], datatype: 'INT32', data: [1] }] }),
    });
    expect([r.status, await r.text()]).to.deep.equal([
      400,
      JSON.stringify({
        error:
          "input 'x': datatype INT32 is not taken: model 'echo' declares no inputs (no ONNX metadata), and its handler gets FP32 rows",
      }),
    ]);
  });

  it('should answer an Inference-Header-Content-Length beyond the body as that, whatever its binary part holds (regression: bytes of 0x5b read as JSON said "nests deeper than 32 levels")', async () => {
    const header = Buffer.from(
      JSON.stringify({ inputs: [{ name: 'x', shape: [1, 1], datatype: 'FP32', parameters: { binary_data_size: 4 } }] }),
    );
    const body = Buffer.concat([header, Buffer.alloc(40, 0x5b)]);
    const r = await fetch(`${base}/v2/models/echo/infer`, {
      method: 'POST',
      body,
      headers: { 'inference-header-content-length': String(body.length + 1) },
    });
    expect([r.status, await r.text()]).to.deep.equal([
      400,
      JSON.stringify({
        error: `Inference-Header-Content-Length ${body.length + 1} is not within the body's ${body.length} bytes`,
      }),
    ]);
    expect(model.submitted).to.deep.equal([]);
  });

  it('should answer every output for an empty outputs list (regression: 200 with "outputs":[])', async () => {
    expect(await infer(2, { outputs: [] })).to.deep.equal({
      status: 200,
      body: {
        model_name: 'echo',
        model_version: '1.0',
        outputs: [{ name: 'output0', shape: [2, 1], datatype: 'FP32', data: [0, 2] }],
      },
    });
  });

  it('should refuse more rows than the queue holds with 400 and queue none (regression: 503 "no room in its job queue", retried forever, its first rows computed for nothing)', async () => {
    expect(await infer(5)).to.deep.equal({
      status: 400,
      body: {
        error:
          "the request has 5 rows, more than model 'echo' queues at once (4, --job-queue-size); send at most 4 rows a request",
      },
    });
    expect(model.submitted).to.deep.equal([]);
    expect(refusals).to.deep.equal([]);
  });

  it('should refuse a shape of more rows than the queue holds before building any (regression: [9007199254740991, 0] holds no data and looped until the server ran out of memory)', async () => {
    const r = await fetch(`${base}/v2/models/echo/infer`, {
      method: 'POST',
      body: JSON.stringify({
        inputs: [{ name: 'x', shape: [Number.MAX_SAFE_INTEGER, 0], datatype: 'FP32', data: [] }],
      }),
    });
    expect([r.status, await r.text()]).to.deep.equal([
      400,
      JSON.stringify({
        error:
          "the request has 9007199254740991 rows, more than model 'echo' queues at once (4, --job-queue-size); send at most 4 rows a request",
      }),
    ]);
    expect(model.submitted).to.deep.equal([]);
  });

  it('should refuse rows the queue has no room for now with 503 and queue none of them (regression: the first rows queued, then 503)', async () => {
    model.queued = 2;
    expect(await infer(3)).to.deep.equal({ status: 503, body: { error: 'Model "echo" has no room in its job queue' } });
    expect(model.submitted).to.deep.equal([]);
    expect(refusals).to.deep.equal(['tsserve_requests_refused_total{"model_name":"echo","reason":"queue_full"} 1']);
    // One row goes to the model's submit, whose refusal the model counts (the route does not, twice).
    model.queued = 4;
    expect(await infer(1)).to.deep.equal({ status: 503, body: { error: 'Model "echo" has no room in its job queue' } });
    expect(refusals).to.have.length(1);
    model.queued = 0;
    expect((await infer(3)).status).to.equal(200);
    expect(model.submitted).to.deep.equal([[0], [1], [2]]);
  });
});

/** A front's proxy: every row is 'queued' (sent); the primary's answer comes a turn later, refusing the rows from `refuseFrom` on. */
class RelayedModel extends QueuedModel {
  readonly admitsRemotely = true;
  private rows = 0;
  constructor(private readonly refuseFrom: number) {
    super(100);
  }
  override submit(job: Job): SubmitResult {
    const k = this.rows++;
    setImmediate(() =>
      job.done(
        k >= this.refuseFrom
          ? {
              status: 503,
              body: { code: 503, type: 'ServiceUnavailableException', message: '/predictions words' },
              queueUs: 0,
              refused: 'queue_full',
            }
          : { status: 200, body: [k], queueUs: 1 },
      ),
    );
    return 'queued';
  }
}

describe("OIP infer route over a relayed model (a front's proxy)", () => {
  it("should answer a row the primary refused with the route's own 503, without Server-Timing (regression: /predictions' words, and timed)", async () => {
    const model = new RelayedModel(1);
    const server = http.createServer(
      inferenceApp({
        lookup: () => model as unknown as ServedModel,
        series: new FrontendSeries(refusalsPort([])),
        maxRequestSizeBytes: 1 << 20,
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/models/echo/infer`, {
        method: 'POST',
        body: JSON.stringify({ inputs: [{ name: 'x', shape: [2, 1], datatype: 'FP32', data: [1, 2] }] }),
      });
      expect([r.status, r.headers.get('server-timing'), await r.text()]).to.deep.equal([
        503,
        null,
        JSON.stringify({ error: 'Model "echo" has no room in its job queue' }),
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
