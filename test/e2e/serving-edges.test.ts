/**
 * The serving lifecycle's hard edges against the real server (slow user-handler models from
 * `slowModelStore`): the drain's 503 with Retry-After, worker counts bounded by the model's
 * maxWorkers and --max-workers, listeners open while models load with /ping and /health
 * following them, the model load timeout, a stuck batch killing its worker, and the
 * shutdown deadline. States are reached by waiting on the server, never on a clock.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { parseTslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import { call, post, slowModelStore, startTsserve } from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';
import { configArgs } from './config-args.js';
import { delta, Scrape } from './generation-helpers.js';

interface WorkerView {
  id: string;
  status: string;
}

async function workersOf(server: Tsserve, model: string): Promise<WorkerView[]> {
  const r = await call('GET', `${server.management}/models/${model}`);
  return (r.json as Array<{ workers: WorkerView[] }>)[0].workers;
}

async function probe(url: string): Promise<{ status: number; body: string }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text() };
}

const DRAIN_503 = {
  code: 503,
  type: 'ServiceUnavailableException',
  message: 'The server is shutting down and accepts no new requests; retry later (or on another instance).',
};

describe('tsserve start: listeners open while models load; /ping and /health follow them (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  after(() => server?.kill());

  it('should answer /ping Unhealthy (500), then Partial Healthy, then Healthy, and /health 503 until every model serves', async () => {
    const store = slowModelStore({ early: { loadMs: 3000 }, late: { loadMs: 8000 } });
    server = await startTsserve({
      store,
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
      ready: 'listening',
    });
    // Neither model can be ready yet: each sleeps at least 3 s in initialize after its fork.
    expect(await probe(`${server.inference}/ping`)).to.deep.equal({ status: 500, body: '{"status":"Unhealthy"}' });
    expect(await probe(`${server.inference}/health`)).to.deep.equal({ status: 503, body: '' });
    expect(server.output()).to.not.contain('Model server started.');
    await until(
      async () => ((await probe(`${server.inference}/ping`)).body === '{"status":"Partial Healthy"}' ? true : null),
      { message: '/ping Partial Healthy', timeoutMs: 60_000 },
    );
    expect(await probe(`${server.inference}/ping`)).to.deep.equal({
      status: 200,
      body: '{"status":"Partial Healthy"}',
    });
    expect(await probe(`${server.inference}/health`)).to.deep.equal({ status: 503, body: '' });
    await until(async () => ((await probe(`${server.inference}/ping`)).body === '{"status":"Healthy"}' ? true : null), {
      message: '/ping Healthy',
      timeoutMs: 60_000,
    });
    expect(await probe(`${server.inference}/health`)).to.deep.equal({ status: 200, body: '' });
    await until(() => server.output().includes('Model server started.'), {
      message: '"Model server started." after the loads',
      observe: () => server.output(),
    });
  });
});

describe('tsserve start: SIGTERM while models load (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  after(() => server?.kill());

  it('should drain from the moment the listeners are up: stop the loading workers and exit 0 without having started', async () => {
    server = await startTsserve({
      store: slowModelStore({ late: { loadMs: 600_000 } }),
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
      ready: 'listening',
    });
    expect(await probe(`${server.inference}/ping`)).to.deep.equal({ status: 500, body: '{"status":"Unhealthy"}' });
    // Its worker forked and loading (a SIGTERM before the fork stops no worker: nothing to log).
    // Until it is registered, /models/late is a 404: no worker yet either.
    await until(
      async () => {
        const r = await call('GET', `${server.management}/models/late`);
        const listed = Array.isArray(r.json) ? (r.json as Array<{ workers?: WorkerView[] }>)[0]?.workers : undefined;
        return listed !== undefined && listed.length > 0 ? true : null;
      },
      {
        message: "the late model's worker forked",
        timeoutMs: 60_000,
      },
    );
    expect(await server.stop('SIGTERM')).to.equal(0);
    expect(server.output()).to.contain('SIGTERM: draining');
    expect(server.output()).to.contain('Model server stopped.');
    expect(server.output()).to.not.contain('Model server started.');
    // A worker stopped on purpose while loading is not a failure (it was an error line per worker).
    expect(server.output()).to.match(/worker W-\d+-late_1\.0 was stopped before it loaded/);
    expect(server.output()).to.not.contain('"level":"error"');
  });
});

describe('tsserve start: worker bounds, load timeout and a stuck batch (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;

  before(async () => {
    const store = slowModelStore({
      slow: {},
      stuck: { responseTimeout: 2 },
      never: { loadMs: 600_000 },
      wide: { maxWorkers: 8 },
    });
    server = await startTsserve({
      store,
      args: [
        ...configArgs(),
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--max-workers',
        '5',
        '--model-load-timeout',
        '10',
      ],
    });
  });
  after(() => server?.kill());

  it('should refuse min_worker above the model maxWorkers with 400 naming it, and start nothing (regression: min_worker=24 forked 24 workers)', async () => {
    const r = await call('PUT', `${server.management}/models/slow?min_worker=24`);
    expect(r).to.deep.equal({
      status: 400,
      json: {
        code: 400,
        type: 'BadRequestException',
        message: 'min_worker 24 exceeds maxWorkers 1 of model slow (raise it with max_worker)',
      },
    });
    expect((await workersOf(server, 'slow')).length).to.equal(1);
  });

  it('should refuse a scale that takes the server over --max-workers with 400 naming it', async () => {
    // 4 models of 1 worker each: 3 besides wide, so wide may have 2 and not 3.
    const over = await call('PUT', `${server.management}/models/wide?min_worker=3&synchronous=true`);
    expect(over).to.deep.equal({
      status: 400,
      json: {
        code: 400,
        type: 'BadRequestException',
        message: '3 workers for model wide would bring the server to 6 workers, over --max-workers 5',
      },
    });
    const ok = await call('PUT', `${server.management}/models/wide?min_worker=2&synchronous=true`);
    expect(ok).to.deep.equal({ status: 200, json: { status: 'Workers scaled to 2 for model: wide' } });
    const reg = await call('POST', `${server.management}/models?url=slow&model_name=extra&initial_workers=1`);
    expect(reg).to.deep.equal({
      status: 400,
      json: {
        code: 400,
        type: 'BadRequestException',
        message: '1 workers for model extra would bring the server to 6 workers, over --max-workers 5',
      },
    });
  });

  it('should kill a worker that does not load within --model-load-timeout and answer its requests 503', async () => {
    await until(
      () => /worker W-\d+-never_1\.0 did not load within the model load timeout of 10 s; killed/.test(server.output()),
      { message: 'the load timeout', timeoutMs: 60_000, observe: () => server.output() },
    );
    const r = await post(`${server.inference}/predictions/never`, { sleepMs: 0 });
    expect([r.status, r.json]).to.deep.equal([
      503,
      {
        code: 503,
        type: 'ServiceUnavailableException',
        message: 'Model "never" has no worker to serve inference request. Please use scale workers API to add workers.',
      },
    ]);
  });

  it('should kill and replace a worker whose batch outlives responseTimeout (504 for its request), then serve', async () => {
    // Loaded first: a request before that would get 503 (no worker), not the timeout under test.
    const before = await until(
      async () => {
        const ws = await workersOf(server, 'stuck');
        return ws.length === 1 && ws[0].status === 'READY' ? ws[0] : null;
      },
      { message: 'the stuck worker loaded', timeoutMs: 60_000 },
    );
    const r = await post(`${server.inference}/predictions/stuck`, { sleepMs: 600_000 });
    expect([r.status, r.json]).to.deep.equal([
      504,
      { code: 504, type: 'RequestTimeoutException', message: 'no response within responseTimeout 2 s' },
    ]);
    const replaced = await until(
      async () => {
        const ws = await workersOf(server, 'stuck');
        return ws.length === 1 && ws[0].id !== before.id && ws[0].status === 'READY' ? ws[0] : null;
      },
      { message: 'a replacement worker for stuck', timeoutMs: 60_000 },
    );
    expect(replaced.id).to.match(/^W-\d+-stuck_1\.0$/);
    expect(server.output()).to.contain(
      `worker ${before.id}: a batch outlived responseTimeout 2 s; killed (it is replaced)`,
    );
    const next = await post(`${server.inference}/predictions/stuck`, { sleepMs: 0 });
    expect([next.status, next.json]).to.deep.equal([200, { slept: 0 }]);
  });
});

describe('tsserve start: scaling a model to 0 answers what it had queued (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  after(() => server?.kill());

  it('should answer the queued requests 503 at once (regression: they waited for responseTimeout and got 504) and finish the one at the worker', async () => {
    server = await startTsserve({
      store: slowModelStore({ q: {} }),
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
    const pending = async (): Promise<number> =>
      (
        (await call('GET', `${server.management}/models/q`)).json as { jobQueueStatus: { pendingRequests: number } }[]
      )[0]!.jobQueueStatus.pendingRequests;
    const held = post(`${server.inference}/predictions/q`, { sleepMs: 1500 });
    // The worker takes one batch ahead (depth 2), so of three more one waits at the worker, two in the queue.
    const more = [0, 1, 2].map(() => post(`${server.inference}/predictions/q`, { sleepMs: 0 }));
    await until(async () => ((await pending()) === 2 ? true : null), {
      message: 'two requests queued behind the worker',
    });
    const scaled = call('PUT', `${server.management}/models/q?min_worker=0&max_worker=1&synchronous=true`);
    const message = 'Model "q" was scaled to 0 workers while this request waited; scale it up with the management API';
    const refused = { code: 503, type: 'ServiceUnavailableException', message };
    const answers = (await Promise.all(more))
      .map((r) => [r.status, r.json])
      .sort((x, y) => (x[0] as number) - (y[0] as number));
    expect(answers).to.deep.equal([
      [200, { slept: 0 }],
      [503, refused],
      [503, refused],
    ]);
    const h = await held;
    expect([h.status, h.json]).to.deep.equal([200, { slept: 1500 }]);
    expect(await scaled).to.deep.equal({ status: 200, json: { status: 'Workers scaled to 0 for model: q' } });
    expect(await pending()).to.equal(0);
    // New requests are told there is no worker, as before.
    const after = await post(`${server.inference}/predictions/q`, { sleepMs: 0 });
    expect([after.status, (after.json as { message: string }).message]).to.deep.equal([
      503,
      'Model "q" has no worker to serve inference request. Please use scale workers API to add workers.',
    ]);
  });
});

describe('tsserve start: SIGTERM drain answers 503 with Retry-After (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  after(() => server?.kill());

  it('should answer new requests 503 with Retry-After (regression: they got 404 Model not found) while every admitted request completes, then exit 0', async () => {
    server = await startTsserve({
      store: slowModelStore({ slow: {} }),
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
    // One batch runs, one is sent ahead and one waits: all three are admitted before SIGTERM.
    const admitted = [0, 1, 2].map(() => post(`${server.inference}/predictions/slow`, { sleepMs: 1500 }));
    await until(
      async () => {
        const d = (await call('GET', `${server.management}/models/slow`)).json as Array<{
          jobQueueStatus: { pendingRequests: number };
        }>;
        return d[0].jobQueueStatus.pendingRequests === 1 ? true : null;
      },
      { message: 'three requests admitted' },
    );
    const exited = new Promise<number | null>((resolve) => server.proc.once('exit', (code) => resolve(code)));
    const before = await Scrape.of(server);
    server.proc.kill('SIGTERM');
    await until(() => server.output().includes('SIGTERM: draining'), {
      message: 'the drain to start',
      observe: () => server.output(),
    });
    const refused = await fetch(`${server.inference}/predictions/slow`, {
      method: 'POST',
      body: '{"sleepMs":0}',
      headers: { 'content-type': 'application/json' },
    });
    expect([
      refused.status,
      refused.headers.get('retry-after'),
      refused.headers.get('connection'),
      JSON.parse(await refused.text()),
    ]).to.deep.equal([503, '5', 'close', DRAIN_503]);
    const ping = await fetch(`${server.inference}/ping`);
    expect([ping.status, ping.headers.get('retry-after')]).to.deep.equal([503, '5']);
    await ping.text();
    // Under /v1 and /v2 the same 503 in those APIs' shapes, so OpenAI and KServe clients read it.
    const drainMessage = DRAIN_503.message;
    const openai = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect([openai.status, openai.headers.get('retry-after'), JSON.parse(await openai.text())]).to.deep.equal([
      503,
      '5',
      { error: { message: drainMessage, type: 'service_unavailable_error', param: null, code: null } },
    ]);
    const oip = await fetch(`${server.inference}/v2/models/slow/infer`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect([oip.status, oip.headers.get('retry-after'), JSON.parse(await oip.text())]).to.deep.equal([
      503,
      '5',
      { error: drainMessage },
    ]);
    const scale = await call('PUT', `${server.management}/models/slow?min_worker=1`);
    expect(scale).to.deep.equal({ status: 503, json: DRAIN_503 });
    expect((await call('GET', `${server.management}/models`)).status).to.equal(200);
    // The five drain answers count in the HTTP families as in Requests5XX (no route matched them yet).
    const during = await Scrape.of(server);
    expect([
      delta(before, during, 'http_requests_total', { handler: 'none', method: 'POST', status: '5xx' }),
      delta(before, during, 'http_requests_total', { handler: 'none', method: 'GET', status: '5xx' }),
      delta(before, during, 'http_requests_total', { handler: 'none', method: 'PUT', status: '5xx' }),
      delta(before, during, 'Requests5XX', {}),
    ]).to.deep.equal([3, 1, 1, 5]);
    const answers = await Promise.all(admitted);
    expect(answers.map((a) => [a.status, a.json])).to.deep.equal(Array(3).fill([200, { slept: 1500 }]));
    expect(await exited).to.equal(0);
    expect(server.output()).to.contain('Model server stopped.');
  });
});

describe('tsserve start: --shutdown-timeout kills stuck workers and still flushes the sinks (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  after(() => server?.kill());

  it('should answer the held batch 500 and the queued request 503 at the deadline, write their metrics, and exit 0', async () => {
    server = await startTsserve({
      store: slowModelStore({ slow: {} }),
      args: [...configArgs(), '--metrics-mode', 'tslog', '--disable-system-metrics', '--shutdown-timeout', '2'],
    });
    const held = [0, 1, 2].map(() => post(`${server.inference}/predictions/slow`, { sleepMs: 600_000 }));
    await until(
      async () => {
        const d = (await call('GET', `${server.management}/models/slow`)).json as Array<{
          jobQueueStatus: { pendingRequests: number };
        }>;
        return d[0].jobQueueStatus.pendingRequests === 1 ? true : null;
      },
      { message: 'three requests admitted' },
    );
    const [w] = await workersOf(server, 'slow');
    expect(await server.stop()).to.equal(0);
    const answers = (await Promise.all(held)).map((a) => [a.status, a.json]);
    expect(answers).to.deep.equal([
      [
        500,
        { code: 500, type: 'InternalServerException', message: `Worker died: worker ${w.id} exited (signal SIGKILL)` },
      ],
      [
        500,
        { code: 500, type: 'InternalServerException', message: `Worker died: worker ${w.id} exited (signal SIGKILL)` },
      ],
      [
        503,
        {
          code: 503,
          type: 'ServiceUnavailableException',
          message: 'model slow is being unregistered or the server is stopping',
        },
      ],
    ]);
    expect(server.output()).to.contain('shutdown: still draining after --shutdown-timeout 2 s; killing 1 worker(s)');
    expect(server.output()).to.contain('Model server stopped.');
    const lines = fs
      .readFileSync(path.join(server.logDir, 'ts_metrics.log'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => parseTslogLine(l));
    expect(lines.filter((l) => l?.name === 'ts_inference_latency_microseconds').length).to.equal(3);
  });
});
