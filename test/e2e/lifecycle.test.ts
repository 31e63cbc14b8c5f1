/**
 * Worker death under load, scaling and registration through the management API, and a
 * graceful SIGTERM — all against the real server and real forked workers.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseTslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import { call, generateStore, mlpInput, post, sample, scrape, slowModelStore, startTsserve } from './harness.js';
import { monotonicSamples } from './sink-readers.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';
import { configArgs } from './config-args.js';

const H = os.hostname();

interface WorkerView {
  id: string;
  pid: number;
  status: string;
}

async function workers(server: Tsserve, model: string, statuses: number[]): Promise<WorkerView[]> {
  const r = await call('GET', `${server.management}/models/${model}`);
  statuses.push(r.status);
  return (r.json as Array<{ workers: WorkerView[] }>)[0].workers;
}

describe('tsserve start: workers, scaling and management (real server)', function () {
  this.timeout(180_000);
  let server: Tsserve;

  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp']),
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
  });
  after(() => server?.kill());

  it('should keep serving when a worker is SIGKILLed under load: new pid, counters never decrease', async () => {
    const base = await scrape(server); // the counts below are this test's own requests
    const statuses: number[] = [];
    const before = await workers(server, 'mlp', statuses);
    expect(before.length).to.equal(1);
    const oldPid = before[0].pid;
    const predictions: number[] = [];
    let stop = false;
    let okAfterRestart = 0;
    let newPid = 0;
    const client = async (seed: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const r = await post(`${server.inference}/predictions/mlp`, mlpInput(seed + i));
        statuses.push(r.status);
        predictions.push(r.status);
        if (newPid !== 0 && r.status === 200) okAfterRestart++;
      }
    };
    const load = [client(0), client(100), client(200), client(300)];
    await until(() => (predictions.filter((s) => s === 200).length >= 20 ? true : null), { message: 'load to start' });
    const sampled = monotonicSamples(await scrape(server));
    process.kill(oldPid, 'SIGKILL');
    const replaced = await until(
      async () => {
        const ws = await workers(server, 'mlp', statuses);
        return ws.length === 1 && ws[0].pid !== oldPid && ws[0].status !== 'STARTING' ? ws : null;
      },
      { message: 'a replacement worker', timeoutMs: 60_000 },
    );
    newPid = replaced[0].pid;
    await until(() => (okAfterRestart >= 10 ? true : null), {
      message: 'requests served by the new worker',
      timeoutMs: 60_000,
    });
    stop = true;
    await Promise.all(load);

    expect(replaced[0].id).to.match(/^W-9\d{3}-mlp_1\.0$/);
    expect(replaced[0].id).to.not.equal(before[0].id);
    // Requests held by the killed worker get a 500; every other one a 200; none hangs.
    expect(predictions.filter((s) => s !== 200 && s !== 500)).to.deep.equal([]);
    const text = await scrape(server);
    const after = monotonicSamples(text);
    for (const [series, v] of sampled) expect(after.get(series) ?? -1, series).to.be.at.least(v);
    const delta = (series: string): number => (sample(text, series) ?? 0) - (sample(base, series) ?? 0);
    expect(delta(`ts_inference_requests_total{model_name="mlp",model_version="default",hostname="${H}"}`)).to.equal(
      predictions.length,
    );
    expect(delta(`Requests2XX{Level="Host",Hostname="${H}"}`)).to.equal(
      statuses.filter((s) => s >= 200 && s < 300).length,
    );
    expect(delta(`Requests5XX{Level="Host",Hostname="${H}"}`)).to.equal(statuses.filter((s) => s >= 500).length);
    // The crash is counted once, for its model (the series existed at 0 before it).
    expect(sample(base, `tsserve_worker_restarts_total{model_name="mlp",Hostname="${H}"}`)).to.equal(0);
    expect(delta(`tsserve_worker_restarts_total{model_name="mlp",Hostname="${H}"}`)).to.equal(1);
  });

  it('should scale mlp up and down through the management API', async () => {
    const up = await call('PUT', `${server.management}/models/mlp?min_worker=3&max_worker=4&synchronous=true`);
    expect(up).to.deep.equal({ status: 200, json: { status: 'Workers scaled to 3 for model: mlp' } });
    const three = await workers(server, 'mlp', []);
    expect(three.map((w) => w.status)).to.deep.equal(['READY', 'READY', 'READY']);
    expect(new Set(three.map((w) => w.pid)).size).to.equal(3);
    const down = await call('PUT', `${server.management}/models/mlp?min_worker=1&synchronous=true`);
    expect(down.status).to.equal(200);
    const one = await workers(server, 'mlp', []);
    expect(one.length).to.equal(1);
    expect(three.map((w) => w.pid)).to.include(one[0].pid);
    const inverted = await call('PUT', `${server.management}/models/mlp?min_worker=3&max_worker=1`);
    expect(inverted).to.deep.equal({
      status: 400,
      json: { code: 400, type: 'BadRequestException', message: 'max_worker cannot be less than min_worker (1 < 3)' },
    });
    expect((await workers(server, 'mlp', [])).length).to.equal(1);
    const async202 = await call('PUT', `${server.management}/models/mlp?min_worker=2`);
    expect(async202).to.deep.equal({ status: 202, json: { status: 'Processing worker updates...' } });
    await until(
      async () => ((await workers(server, 'mlp', [])).filter((w) => w.status === 'READY').length === 2 ? true : null),
      { message: '2 workers' },
    );
    // Leave the server as the other tests expect it: one worker.
    const back = await call('PUT', `${server.management}/models/mlp?min_worker=1&synchronous=true`);
    expect(back).to.deep.equal({ status: 200, json: { status: 'Workers scaled to 1 for model: mlp' } });
  });

  it('should register, serve and unregister a model from the store', async () => {
    const reg = await call(
      'POST',
      `${server.management}/models?url=mlp&model_name=mlp2&batch_size=4&max_batch_delay=10&initial_workers=1`,
    );
    expect(reg).to.deep.equal({
      status: 200,
      json: { status: 'Model "mlp2" Version: 1.0 registered with 1 initial workers' },
    });
    const list = await call('GET', `${server.management}/models`);
    expect(list.json).to.deep.equal({
      models: [
        { modelName: 'mlp', modelVersion: '1.0', modelUrl: 'mlp' },
        { modelName: 'mlp2', modelVersion: '1.0', modelUrl: 'mlp' },
      ],
    });
    const desc = (await call('GET', `${server.management}/models/mlp2`)).json as Array<Record<string, unknown>>;
    expect([desc[0].batchSize, desc[0].maxBatchDelay, desc[0].minWorkers]).to.deep.equal([4, 10, 1]);
    expect((await post(`${server.inference}/predictions/mlp2`, mlpInput(3))).status).to.equal(200);
    const escape = await call('POST', `${server.management}/models?url=../mlp&model_name=evil`);
    const escapeMessage = { code: 400, type: 'BadRequestException', message: "path '../mlp' must not contain '..'" };
    expect(escape).to.deep.equal({ status: 400, json: escapeMessage });
    // Without a name the url's last part would be mlp, already registered: the escape is still the answer.
    expect(await call('POST', `${server.management}/models?url=../mlp`)).to.deep.equal({
      status: 400,
      json: escapeMessage,
    });
    const badBatch = await call('POST', `${server.management}/models?url=mlp&model_name=bad&batch_size=abc`);
    expect(badBatch).to.deep.equal({
      status: 400,
      json: {
        code: 400,
        type: 'BadRequestException',
        message: "parameter batch_size must be an integer from 1 to 1024 (got 'abc')",
      },
    });
    const badScale = await call('PUT', `${server.management}/models/mlp2?min_worker=-1`);
    expect(badScale).to.deep.equal({
      status: 400,
      json: {
        code: 400,
        type: 'BadRequestException',
        message: "parameter min_worker must be an integer from 0 to 1024 (got '-1')",
      },
    });
    expect((await call('GET', `${server.management}/models/bad`)).status).to.equal(404);
    const dup = await call('POST', `${server.management}/models?url=mlp&model_name=mlp2`);
    expect(dup.status).to.equal(409);
    const del = await call('DELETE', `${server.management}/models/mlp2`);
    expect(del).to.deep.equal({ status: 200, json: { status: 'Model "mlp2" unregistered' } });
    expect((await post(`${server.inference}/predictions/mlp2`, mlpInput(3))).status).to.equal(404);
  });

  it('should refuse a timer past its bound, an exponent, an unbounded count, a repeated url and synchronous=maybe with a 400 naming the parameter', async () => {
    const bad = (message: string): unknown => ({
      status: 400,
      json: { code: 400, type: 'BadRequestException', message },
    });
    const reg = (qs: string): Promise<unknown> =>
      call('POST', `${server.management}/models?url=mlp&model_name=mlp3&${qs}`);
    // 3000000 s overflowed setTimeout to 1 ms: every request answered 504 and killed the worker.
    expect(await reg('response_timeout=3000000')).to.deep.equal(
      bad("parameter response_timeout must be an integer from 1 to 86400 seconds (got '3000000')"),
    );
    expect(await reg('response_timeout=1e23')).to.deep.equal(
      bad("parameter response_timeout must be an integer from 1 to 86400 seconds (got '1e23')"),
    );
    expect(await reg('response_timeout=1e3')).to.deep.equal(
      bad("parameter response_timeout must be an integer from 1 to 86400 seconds (got '1e3')"),
    );
    expect(await reg('batch_size=99999999999999999999')).to.deep.equal(
      bad("parameter batch_size must be an integer from 1 to 1024 (got '99999999999999999999')"),
    );
    expect(await reg('max_batch_delay=1e300')).to.deep.equal(
      bad("parameter max_batch_delay must be an integer from 0 to 60000 ms (got '1e300')"),
    );
    expect(await reg('synchronous=maybe')).to.deep.equal(
      bad("parameter synchronous must be true or false (got 'maybe')"),
    );
    expect(await call('POST', `${server.management}/models?url=mlp&url=custom&model_name=mlp3`)).to.deep.equal(
      bad('parameter url must be given once (got 2 values)'),
    );
    expect(
      await call('PUT', `${server.management}/models/mlp?min_worker=1&max_worker=100000000000000000000`),
    ).to.deep.equal(bad("parameter max_worker must be an integer from 0 to 1024 (got '100000000000000000000')"));
    expect(await call('PUT', `${server.management}/models/mlp?min_worker=1e300`)).to.deep.equal(
      bad("parameter min_worker must be an integer from 0 to 1024 (got '1e300')"),
    );
    const cap = 4 * os.availableParallelism();
    expect(await call('PUT', `${server.management}/models/mlp?min_worker=1&max_worker=${cap + 1}`)).to.deep.equal(
      bad(`max_worker ${cap + 1} is over --max-workers ${cap}`),
    );
    // Nothing was registered or rescaled.
    expect((await call('GET', `${server.management}/models/mlp3`)).status).to.equal(404);
    const desc = (await call('GET', `${server.management}/models/mlp`)).json as Array<Record<string, unknown>>;
    expect([desc[0].minWorkers, desc[0].maxWorkers, desc[0].responseTimeout]).to.deep.equal([1, 4, 30]);
  });
});

describe('tsserve start: SIGTERM drains (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  after(() => server?.kill());

  it('should finish in-flight requests, flush workers and sinks, and exit 0', async () => {
    server = await startTsserve({
      store: generateStore(['mlp']),
      args: [...configArgs(), '--metrics-mode', 'tslog,prometheus', '--disable-system-metrics'],
    });
    // A model whose batches wait 60 s to fill: its requests are still queued when SIGTERM comes.
    const reg = await call(
      'POST',
      `${server.management}/models?url=mlp&model_name=slow&batch_size=64&max_batch_delay=60000&initial_workers=1`,
    );
    expect(reg.status).to.equal(200);
    const M = 6;
    const pending = Array.from({ length: M }, (_v, i) => post(`${server.inference}/predictions/slow`, mlpInput(i)));
    await until(
      async () =>
        sample(
          await scrape(server),
          `ts_inference_requests_total{model_name="slow",model_version="default",hostname="${H}"}`,
        ) === M
          ? true
          : null,
      { message: 'requests admitted' },
    );
    const code = await server.stop('SIGTERM');
    const answers = await Promise.all(pending);
    expect(answers.map((a) => a.status)).to.deep.equal(Array(M).fill(200));
    expect(code).to.equal(0);
    expect(server.output()).to.contain('Model server stopped.');
    const ts = fs
      .readFileSync(path.join(server.logDir, 'ts_metrics.log'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => parseTslogLine(l));
    expect(
      ts.filter((l) => l?.name === 'ts_inference_latency_microseconds' && l.dimensions[0][1] === 'slow').length,
    ).to.equal(M);
    const model = fs
      .readFileSync(path.join(server.logDir, 'model_metrics.log'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => parseTslogLine(l));
    const ids = new Set(model.filter((l) => l?.name === 'HandlerTime').flatMap((l) => (l?.requestId ?? '').split(',')));
    for (const a of answers) expect(ids.has(a.requestId ?? ''), `HandlerTime for ${a.requestId}`).to.equal(true);
  });
});

describe("tsserve start: a terminal's SIGHUP and Ctrl-C drain like SIGTERM (real server)", function () {
  this.timeout(120_000);
  let server: Tsserve | undefined;
  afterEach(() => server?.kill());

  // Sent to the whole process group, as the terminal sends them: the workers get the signal too.
  for (const [signal, why] of [
    ['SIGHUP', "node's default SIGHUP exit cut it, and the workers died with the group's hang-up"],
    ['SIGINT', "the workers died at once with the group's Ctrl-C: the in-flight request got 500 Worker died"],
  ] as const) {
    it(`should finish the in-flight requests and exit 0 with the drain and stop lines on a group-wide ${signal} (regression: ${why})`, async () => {
      const s = (server = await startTsserve({
        store: slowModelStore({ slow: {} }),
        args: [...configArgs(), '--metrics-mode', 'tslog', '--disable-system-metrics'],
      }));
      // batchSize 1, one worker: one batch runs (sleeping 1.5 s), one is sent ahead and one waits.
      const inFlight = [0, 1, 2].map(() => post(`${s.inference}/predictions/slow`, { sleepMs: 1500 }));
      await until(
        async () => {
          const d = (await call('GET', `${s.management}/models/slow`)).json as Array<{
            jobQueueStatus: { pendingRequests: number };
          }>;
          return d[0].jobQueueStatus.pendingRequests === 1 ? true : null;
        },
        { message: 'three requests admitted' },
      );
      const code = await s.stop(signal, true);
      const answers = await Promise.all(inFlight);
      expect(answers.map((a) => [a.status, a.json])).to.deep.equal(Array(3).fill([200, { slept: 1500 }]));
      expect(code).to.equal(0);
      const msgs = fs
        .readFileSync(path.join(s.logDir, 'ts_log.log'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(msgs.slice(-2)).to.deep.equal([
        `${signal}: draining (finishing in-flight requests, stopping workers)`,
        'Model server stopped.',
      ]);
    });
  }
});
