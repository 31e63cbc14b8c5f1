import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { MetricSpec, MetricsConfig } from '../../../schema/types.js';
import { FrontendSeries, checkFrontendMetrics } from '../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import { createServer } from '../../../frontend/main.js';
import type { TsServer } from '../../../frontend/main.js';
import { recordingLog } from '../log/recording-log.js';

const CONFIG: MetricsConfig = {
  file: '',
  modes: [],
  autoDetect: false,
  metrics: [],
  statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
  limits: { maxSeriesPerMetric: 100, maxPointsPerFlush: 100 },
};

function spec(name: string, type: MetricSpec['type'], dimensions: string[]): MetricSpec {
  return {
    name,
    section: 'ts_metrics',
    type,
    unit: 'Count',
    dimensions,
    hostLabel: 'Hostname',
    help: '',
    buckets: [],
    pos: { line: 3, col: 7 },
  };
}

/** Records `name{dims} value` per record call. */
class RecordingMetrics implements MetricsPort {
  readonly records: string[] = [];
  readonly prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';
  readonly modes = [] as const;
  constructor(private readonly specs: MetricSpec[]) {}
  get(name: string): MetricHandle | null {
    const s = this.specs.find((x) => x.name === name);
    if (s === undefined) return null;
    return {
      spec: s,
      bind: (dims) => ({
        record: (v: number) => {
          this.records.push(`${name}${JSON.stringify(dims)} ${v}`);
        },
      }),
    };
  }
  byKey(): MetricHandle | null {
    return null;
  }
  prometheusText(): Promise<string> {
    return Promise.resolve('# fake\n');
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe('checkFrontendMetrics', () => {
  it('should name the dimensions and type the server supplies when the yaml differs', () => {
    const m = new RecordingMetrics([
      spec('Requests2XX', 'counter', ['Level', 'Port']),
      spec('QueueTime', 'counter', ['Level']),
      spec('ts_inference_requests_total', 'counter', ['model_version', 'model_name']),
    ]);
    expect(checkFrontendMetrics(m)).to.deep.equal([
      '3:7: metric Requests2XX must have dimensions [Level] (+ the hostname), declared [Level, Port]',
      '3:7: metric QueueTime must be a gauge or histogram (declared counter)',
    ]);
  });
});

describe('FrontendSeries.countResponse', () => {
  it('should count 2xx, 4xx and 5xx once each and 1xx/3xx in none of them', () => {
    const m = new RecordingMetrics([
      spec('Requests2XX', 'counter', ['Level']),
      spec('Requests4XX', 'counter', ['Level']),
      spec('Requests5XX', 'counter', ['Level']),
    ]);
    const series = new FrontendSeries(m);
    for (const status of [100, 101, 200, 204, 301, 304, 399, 400, 413, 499, 500, 503, 504, 599])
      series.countResponse(status);
    expect(m.records).to.deep.equal([
      'Requests2XX{"Level":"Host"} 1',
      'Requests2XX{"Level":"Host"} 1',
      'Requests4XX{"Level":"Host"} 1',
      'Requests4XX{"Level":"Host"} 1',
      'Requests4XX{"Level":"Host"} 1',
      'Requests5XX{"Level":"Host"} 1',
      'Requests5XX{"Level":"Host"} 1',
      'Requests5XX{"Level":"Host"} 1',
      'Requests5XX{"Level":"Host"} 1',
    ]);
  });
});

describe('FrontendSeries.workerLoaded', () => {
  it('should record a worker load time to the microsecond, without the float noise of a clock difference', () => {
    const m = new RecordingMetrics([spec('WorkerLoadTime', 'gauge', ['WorkerName', 'Level'])]);
    new FrontendSeries(m).workerLoaded('W-9000-mlp_1.0', 37.90763000000001);
    expect(m.records).to.deep.equal(['WorkerLoadTime{"WorkerName":"W-9000-mlp_1.0","Level":"Host"} 37.908']);
  });
});

/** The requests both tests make: management without, with the wrong and with the right key; ping; a prediction; a body over the limit. */
async function exercise(
  server: TsServer,
  keys: { management: { key: string }; inference: { key: string } },
): Promise<Array<{ status: number; body: unknown }>> {
  const auth = (key: string): Record<string, string> => ({ authorization: `Bearer ${key}` });
  const responses = [
    await fetch(`${server.urls.management}/models`),
    await fetch(`${server.urls.management}/models`, { headers: auth(keys.inference.key) }),
    await fetch(`${server.urls.management}/models`, { headers: auth(keys.management.key) }),
    await fetch(`${server.urls.inference}/ping`),
    await fetch(`${server.urls.inference}/predictions/echo`, {
      method: 'POST',
      body: '[1]',
      headers: auth(keys.inference.key),
    }),
    await fetch(`${server.urls.inference}/predictions/echo`, {
      method: 'POST',
      body: JSON.stringify('x'.repeat(200)),
      headers: auth(keys.inference.key),
    }),
  ];
  return Promise.all(responses.map(async (r) => ({ status: r.status, body: JSON.parse(await r.text()) as unknown })));
}

describe('createServer (forked fixture workers, recording metrics)', function () {
  this.timeout(30_000);
  let store: string;
  let logDir: string;
  let server: TsServer;
  let metrics: RecordingMetrics;
  let keys: { management: { key: string }; inference: { key: string } };

  // Each test gets its own server, so what one records is never what another asserts.
  beforeEach(async () => {
    metrics = new RecordingMetrics([
      spec('Requests2XX', 'counter', ['Level']),
      spec('Requests4XX', 'counter', ['Level']),
      spec('Requests5XX', 'counter', ['Level']),
      spec('ts_inference_requests_total', 'counter', ['model_name', 'model_version']),
      spec('WorkerLoadTime', 'gauge', ['WorkerName', 'Level']),
    ]);
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-srv-'));
    logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-srvlog-'));
    fs.mkdirSync(path.join(store, 'echo'));
    // A custom handler (the echo worker never reads it): no graph the frontend would check requests against.
    fs.writeFileSync(path.join(store, 'echo', 'handler.js'), '');
    fs.writeFileSync(path.join(store, 'echo', 'model.onnx'), '');
    fs.writeFileSync(
      path.join(store, 'echo', 'model-config.yaml'),
      'handler: handler.js\nmodel: model.onnx\nbatchSize: 1\nmaxBatchDelay: 0\nminWorkers: 1\n',
    );
    server = await createServer(
      {
        server: {
          inference: { host: '127.0.0.1', port: 0 },
          management: { host: '127.0.0.1', port: 0 },
          metrics: { host: '127.0.0.1', port: 0 },
          modelStore: store,
          models: 'all',
          logDir,
          enableTokenAuth: true,
          maxRequestSizeBytes: 100,
          workerEntry: path.join(import.meta.dirname, '..', 'workers', 'fixtures', 'echo-worker.js'),
        },
        metrics: { config: CONFIG, configFile: '', systemIntervalSec: null },
      },
      {
        kinds: [],
        logger: { log: recordingLog([]) },
        metrics: { port: metrics, ingest: { handle: () => false, forget: () => undefined } },
      },
    );
    keys = JSON.parse(fs.readFileSync(path.join(logDir, 'key_file.json'), 'utf8')) as typeof keys;
  });
  afterEach(async () => {
    await server?.stop();
    fs.rmSync(store, { recursive: true, force: true });
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  it('should write key_file.json, answer 401 without the right bearer token, and serve ping, a prediction and a 413 with their exact bodies', async () => {
    expect([keys.management.key, keys.inference.key]).to.deep.equal([server.keys?.management, server.keys?.inference]);
    const denied = {
      code: 401,
      type: 'InvalidKeyException',
      message: 'Token Authorization failed. Token either incorrect, expired, or not provided correctly',
    };
    const [noKey, wrongKey, ok, ping, pred, big] = await exercise(server, keys);
    expect(noKey).to.deep.equal({ status: 401, body: denied });
    expect(wrongKey).to.deep.equal({ status: 401, body: denied });
    expect(ok).to.deep.equal({
      status: 200,
      body: { models: [{ modelName: 'echo', modelVersion: '1.0', modelUrl: 'echo' }] },
    });
    expect(ping).to.deep.equal({ status: 200, body: { status: 'Healthy' } });
    const { pid, ...echoed } = pred.body as { pid: number };
    expect([pred.status, echoed]).to.deep.equal([200, { echo: [1], batch: 1, worker: 'W-9000-echo_1.0' }]);
    expect(pid).to.be.a('number').and.not.equal(process.pid); // answered by the forked worker
    expect(big).to.deep.equal({
      status: 413,
      body: {
        code: 413,
        type: 'RequestEntityTooLargeException',
        message: 'request body exceeds the limit of 100 bytes (--max-request-size)',
      },
    });
  });

  it('should record exactly one Requests series per response and the worker load and admission', async () => {
    expect((await exercise(server, keys)).map((r) => r.status)).to.deep.equal([401, 401, 200, 200, 200, 413]);
    expect(metrics.records).to.deep.equal([
      'WorkerLoadTime{"WorkerName":"W-9000-echo_1.0","Level":"Host"} 5',
      'Requests4XX{"Level":"Host"} 1',
      'Requests4XX{"Level":"Host"} 1',
      'Requests2XX{"Level":"Host"} 1',
      'Requests2XX{"Level":"Host"} 1',
      'ts_inference_requests_total{"model_name":"echo","model_version":"default"} 1',
      'Requests2XX{"Level":"Host"} 1',
      'Requests4XX{"Level":"Host"} 1',
    ]);
  });
});
