/**
 * The inference app over fake models: the Open Inference Protocol's readiness, and with token
 * auth on, which paths a request without the bearer key may reach, with exact answers.
 */
import { expect } from 'chai';
import * as http from 'http';
import type { AddressInfo } from 'net';
import { routeTable } from '../../../frontend/http/route-table.js';
import { inferenceApp } from '../../../frontend/http/inference-app.js';
import type { InferenceListener } from '../../../frontend/http/inference-app.js';
import { speechRouter } from '../../../frontend/openai/audio.js';
import { openaiRouter } from '../../../frontend/openai/router.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import type { ServedModel } from '../../../frontend/models/served-model.js';
import type { WorkerStatus } from '../../../frontend/workers/worker-process.js';
import { deferContinue } from '../../../frontend/http/expect-continue.js';
import { agreeing, sweepMethods } from '../../support/method-sweep.js';
import { rawExchange, withoutDate } from '../../support/raw-http.js';

/** Metrics off: every series a no-op. */
const NO_METRICS: MetricsPort = {
  prometheusContentType: 'text/plain',
  modes: [],
  get: (): MetricHandle | null => null,
  byKey: (): MetricHandle | null => null,
  prometheusText: () => Promise.resolve(''),
  close: () => Promise.resolve(),
};

const DENIED = {
  code: 401,
  type: 'InvalidKeyException',
  message: 'Token Authorization failed. Token either incorrect, expired, or not provided correctly',
};

/** A model seen through describe(): its minWorkers and its workers' statuses. */
function model(name: string, minWorkers: number, statuses: WorkerStatus[]): ServedModel {
  const workers = statuses.map((status, i) => ({ id: `W-${9000 + i}-${name}_1.0`, pid: 1, status, startTime: '' }));
  return { config: { name, version: '1.0' }, describe: () => ({ minWorkers, workers }) } as unknown as ServedModel;
}

describe("inferenceApp: the Open Inference Protocol's readiness", () => {
  let models: ServedModel[] = [];
  let server: http.Server;
  let base = '';

  before(async () => {
    const listener = inferenceApp({
      lookup: (n) => models.find((m) => m.config.name === n),
      list: () => models,
      series: new FrontendSeries(NO_METRICS),
      maxRequestSizeBytes: 1 << 20,
    });
    server = http.createServer(listener);
    deferContinue(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const status = async (path: string): Promise<number> => (await fetch(`${base}${path}`)).status;

  it('should be ready when every model that wants workers has one, a model scaled to 0 aside (regression: 400, the whole server out of its balancer)', async () => {
    models = [model('mlp', 1, ['READY']), model('idle', 0, [])];
    expect([
      await status('/v2/health/ready'),
      await status('/v2/models/mlp/ready'),
      await status('/v2/models/idle/ready'),
    ]).to.deep.equal([200, 200, 400]);
  });

  it('should not be ready while a model that wants workers has none ready', async () => {
    models = [model('mlp', 1, ['READY']), model('loading', 1, ['STARTING'])];
    expect([await status('/v2/health/ready'), await status('/v2/models/loading/ready')]).to.deep.equal([400, 400]);
  });
});

describe('inferenceApp with token auth', () => {
  let server: http.Server;
  let base = '';

  before(async () => {
    const listener = inferenceApp({
      lookup: () => undefined,
      list: () => [],
      series: new FrontendSeries(NO_METRICS),
      maxRequestSizeBytes: 1 << 20,
      token: 'k3y',
    });
    server = http.createServer(listener);
    deferContinue(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function get(path: string, key?: string): Promise<{ status: number; body: string }> {
    const r = await fetch(`${base}${path}`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
    return { status: r.status, body: await r.text() };
  }

  it("should answer the probes without a key, the Open Inference Protocol's server liveness and readiness included (regression: 401, so the shipped Kubernetes probes failed)", async () => {
    expect(await get('/ping')).to.deep.equal({ status: 200, body: '{"status":"Healthy"}' });
    expect(await get('/health')).to.deep.equal({ status: 200, body: '' });
    expect(await get('/v2/health/live')).to.deep.equal({ status: 200, body: '' });
    expect(await get('/v2/health/ready')).to.deep.equal({ status: 200, body: '' });
  });

  it('should still require the key on the rest of the protocol', async () => {
    expect(await get('/v2')).to.deep.equal({ status: 401, body: JSON.stringify(DENIED) });
    expect(await get('/v2/models/mlp/ready')).to.deep.equal({ status: 401, body: JSON.stringify(DENIED) });
    expect(await get('/v2/models/mlp/ready', 'k3y')).to.deep.equal({
      status: 404,
      body: '{"error":"Model not found: mlp"}',
    });
    expect(await get('/v2', 'wrong')).to.deep.equal({ status: 401, body: JSON.stringify(DENIED) });
  });

  it('should answer 401 from the headers on /predictions, /v2 infer and /v1 without a 100 Continue or reading the body, and close (regression: the predictions route drained up to 16 MiB of it)', async () => {
    const denied = `HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${JSON.stringify(DENIED).length}\r\n\r\n${JSON.stringify(DENIED)}`;
    const answers: string[] = [];
    for (const path of ['/predictions/mlp', '/v2/models/mlp/infer', '/v1/completions']) {
      // 5 of 500000 declared bytes: the 401 comes only if the body is not waited for; the 100 never.
      const headers = `content-length: 500000\r\ncontent-type: application/json\r\n${path === '/v1/completions' ? 'expect: 100-continue\r\n' : ''}`;
      answers.push(
        withoutDate(
          await rawExchange(base, {
            send: `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${headers}\r\n[1,2`,
            afterContinue: Buffer.alloc(500_000, 0x20),
          }),
        ),
      );
    }
    expect(answers).to.deep.equal([denied, denied, denied]);
  });
});

describe('inferenceApp: a path that exists, with a method it does not take', () => {
  let server: http.Server;
  let listener: InferenceListener;
  let base = '';
  before(async () => {
    // The routers the server mounts: the generation kind's (OpenAI's and vLLM's) and the pipeline kind's (speech), plus one of a test's own.
    const own = routeTable();
    own.get('/own', (_req, res) => {
      res.end();
    });
    own.delete('/own', (_req, res) => {
      res.end();
    });
    const extraRoutes = [
      openaiRouter({ lookup: () => undefined, list: () => [] }),
      speechRouter({ lookup: () => undefined }),
      own.router,
    ];
    listener = inferenceApp({
      lookup: () => undefined,
      list: () => [],
      series: new FrontendSeries(NO_METRICS),
      maxRequestSizeBytes: 1 << 20,
      extraRoutes,
    });
    server = http.createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  /** Every path the inference port routes and the methods its routes take, in the order they are mounted. */
  const ROUTED: readonly (readonly [string, string])[] = [
    ['/ping', 'GET, HEAD'],
    ['/health', 'GET, HEAD'],
    ['/v2', 'GET, HEAD'],
    ['/v2/health/live', 'GET, HEAD'],
    ['/v2/health/ready', 'GET, HEAD'],
    ['/v2/models/:model{/versions/:version}/ready', 'GET, HEAD'],
    ['/v2/models/:model{/versions/:version}', 'GET, HEAD'],
    ['/v1/completions', 'POST'],
    ['/v1/chat/completions', 'POST'],
    ['/v1/models', 'GET, HEAD'],
    ['/v1/models/:model', 'GET, HEAD'],
    ['/sleep', 'POST'],
    ['/wake_up', 'POST'],
    ['/is_sleeping', 'GET, HEAD'],
    ['/version', 'GET, HEAD'],
    ['/tokenize', 'POST'],
    ['/detokenize', 'POST'],
    ['/v1/audio/speech', 'POST'],
    ['/own', 'GET, HEAD, DELETE'],
    ['/predictions/:model{/:version}', 'POST, PUT'],
    ['/v2/models/:model{/versions/:version}/infer', 'POST'],
  ];

  it('should derive its 405s from the routes it mounts: every routed path, its Allow exactly the methods its routes take (regression: a second table beside the routers, where a route left out answered 404)', async () => {
    expect([...listener.allowed]).to.deep.equal(ROUTED);
    expect(await sweepMethods(base, listener.allowed)).to.deep.equal(
      ROUTED.map(([path, allow]) => agreeing(path, allow)),
    );
  });

  it('should answer 405 with Allow in the path\'s API shape, not 404 "not found" (regression: DELETE /predictions/mlp and PUT /ping were 404)', async () => {
    const ask = async (method: string, path: string): Promise<[number, string | null, unknown]> => {
      const r = await fetch(`${base}${path}`, { method });
      return [r.status, r.headers.get('allow'), await r.json()];
    };
    const torchserve = {
      code: 405,
      type: 'MethodNotAllowedException',
      message: 'Requested method is not allowed, please refer to API document.',
    };
    expect(await ask('DELETE', '/predictions/mlp')).to.deep.equal([405, 'POST, PUT', torchserve]);
    expect(await ask('PUT', '/ping')).to.deep.equal([405, 'GET, HEAD', torchserve]);
    expect(await ask('POST', '/own')).to.deep.equal([405, 'GET, HEAD, DELETE', torchserve]);
    expect(await ask('GET', '/v1/completions')).to.deep.equal([
      405,
      'POST',
      {
        error: {
          message: 'Method GET is not allowed on /v1/completions; it takes POST',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    ]);
    expect(await ask('DELETE', '/v2/models/mlp')).to.deep.equal([
      405,
      'GET, HEAD',
      { error: 'Method DELETE is not allowed on /v2/models/mlp; it takes GET, HEAD' },
    ]);
    // An unknown path is still a 404.
    expect(await ask('DELETE', '/nowhere')).to.deep.equal([
      404,
      null,
      {
        code: 404,
        type: 'ResourceNotFoundException',
        message: 'Requested resource is not found, please refer to API document.',
      },
    ]);
  });

  it("should list only the paths its routers serve: no /v1 path without the generation kind's router", async () => {
    const bare = inferenceApp({
      lookup: () => undefined,
      list: () => [],
      series: new FrontendSeries(NO_METRICS),
      maxRequestSizeBytes: 1 << 20,
    });
    expect([...bare.allowed.keys()]).to.deep.equal([
      '/ping',
      '/health',
      '/v2',
      '/v2/health/live',
      '/v2/health/ready',
      '/v2/models/:model{/versions/:version}/ready',
      '/v2/models/:model{/versions/:version}',
      '/predictions/:model{/:version}',
      '/v2/models/:model{/versions/:version}/infer',
    ]);
  });
});
