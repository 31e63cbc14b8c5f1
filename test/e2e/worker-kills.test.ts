/**
 * Workers SIGKILLed again and again under load, against the real server with every sink at once
 * (tslog, Prometheus, StatsD to the REAL statsd daemon): each kill is one restart, every 200 is
 * counted exactly once in every sink, no Prometheus counter ever goes down between scrapes, and
 * the only datapoints missing are those a killed worker had not written whole to its channel
 * (docs/ipc.md, "What a killed worker loses"); a worker whose stdout and stderr a process it
 * started holds open is replaced all the same.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { TslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import { call, generateStore, mlpInput, post, ROOT, sample, scrape, startTsserve, tempDir } from './harness.js';
import { monotonicSamples, tslogLines } from './sink-readers.js';
import type { Tsserve } from './harness.js';
import { startStatsd } from './statsd-daemon.js';
import type { StatsdDaemon } from './statsd-daemon.js';
import { until } from '../support/until.js';

const H = os.hostname();
/** Kills of the `custom` worker (the example handler's metrics) and of the `mlp` worker. */
const CUSTOM_KILLS = 3;
const MLP_KILLS = 1;
/** Requests each model answers 200 between two kills (and after the last). */
const SERVED_BETWEEN = 40;

/** The ceiling of limits.max_points_per_flush: a flush that size is a 12 MiB message. */
const MAX_POINTS = 2 ** 20;

/**
 * `flushkill`: each request adds 1 to PostprocessCallCount and observes 50 in ExamplePercentMetric.
 * A `{"kill": "after-flush"}` body adds 5 and observes 50, flushes, adds 7 and observes 60, then
 * SIGKILLs its own worker: the flushed datapoints are delivered, the two after them are not.
 * `{"kill": "mid-flush"}` adds 3, flushes, then adds 1 MAX_POINTS + 1 times: the last finds the
 * buffer full at the cap, which flushes itself as one 12 MiB message, more than a socket buffer
 * holds (process.send answers false: the rest is queued), and the worker SIGKILLs itself while
 * that message is still being written. `{"kill": "after-timer"}` adds 2, awaits 1.5 s (the
 * worker's 1 s timer flushes the 2 meanwhile), then SIGKILLs its worker.
 */
const FLUSHKILL = `export function handle(requests, ctx) {
  const m = ctx.metrics;
  const kill = requests.map((r) => (r.body !== null && typeof r.body === 'object' ? r.body.kill : undefined)).find((k) => k !== undefined);
  if (kill === 'after-flush') {
    m.addCounter('PostprocessCallCount', 5);
    m.addPercent('ExamplePercentMetric', 50, undefined, undefined, 'histogram');
    m.flush();
    m.addCounter('PostprocessCallCount', 7);
    m.addPercent('ExamplePercentMetric', 60, undefined, undefined, 'histogram');
    process.kill(process.pid, 'SIGKILL');
  }
  if (kill === 'mid-flush') {
    m.addCounter('PostprocessCallCount', 3);
    m.flush();
    const c = m.getMetric('PostprocessCallCount', 'counter');
    for (let i = 0; i <= ${MAX_POINTS}; i++) c.addOrUpdate(1, { ModelName: ctx.modelName, Level: 'Model' });
    process.kill(process.pid, 'SIGKILL');
  }
  if (kill === 'after-timer') {
    m.addCounter('PostprocessCallCount', 2);
    // Longer than the worker's 1 s flush timer: a timer flush takes the 2 while this awaits.
    return new Promise((resolve) => setTimeout(resolve, 1500)).then(() => process.kill(process.pid, 'SIGKILL'));
  }
  if (kill !== undefined) return new Promise(() => undefined);
  for (const r of requests) {
    m.addCounter('PostprocessCallCount', 1, r.requestId);
    m.addPercent('ExamplePercentMetric', 50, r.requestId, undefined, 'histogram');
  }
  return requests.map(() => ({ ok: true }));
}
`;

/**
 * `helper`: its initialize starts a helper process that shares the worker's stdout and stderr
 * and outlives it (2 min; the test kills it), appending its pid to `pidFile`.
 */
const helperHandler = (pidFile: string): string => `import { spawn } from 'child_process';
import { appendFileSync } from 'fs';
export function initialize() {
  const helper = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 120000)'], { stdio: ['ignore', 'inherit', 'inherit'] });
  appendFileSync(${JSON.stringify(pidFile)}, helper.pid + '\\n');
}
export function handle(requests) { return requests.map(() => ({ ok: true })); }
`;

interface WorkerView {
  id: string;
  pid: number;
  status: string;
}

async function workersOf(server: Tsserve, model: string): Promise<WorkerView[]> {
  return ((await call('GET', `${server.management}/models/${model}`)).json as Array<{ workers: WorkerView[] }>)[0]
    .workers;
}

function tslog(server: Tsserve, file: string, name: string): TslogLine[] {
  return tslogLines(server.logDir, file).filter((l) => l.name === name);
}

const dim = (l: TslogLine, key: string): string | undefined => l.dimensions.find(([k]) => k === key)?.[1];

/** Sum of the values of the statsd daemon's `name:V|type|#tags` lines whose tags contain `tag`. */
function statsdSum(statsd: StatsdDaemon, name: string, tag: string): number {
  return statsd.lines
    .filter((l) => l.startsWith(`${name}:`) && l.includes(tag))
    .reduce((s, l) => s + Number(l.slice(name.length + 1, l.indexOf('|'))), 0);
}

function statsdCount(statsd: StatsdDaemon, name: string, tag: string): number {
  return statsd.lines.filter((l) => l.startsWith(`${name}:`) && l.includes(tag)).length;
}

describe('tsserve start: workers SIGKILLed under load, every sink at once (real server, real statsd)', function () {
  this.timeout(120_000);
  let statsd: StatsdDaemon;
  let server: Tsserve;
  let storeRoot = '';

  before(async () => {
    statsd = await startStatsd();
    storeRoot = tempDir('kills-store');
    const store = path.join(storeRoot, 'store');
    fs.cpSync(generateStore(['mlp', 'custom']), store, { recursive: true });
    fs.mkdirSync(path.join(store, 'flushkill'));
    fs.writeFileSync(path.join(store, 'flushkill', 'handler.mjs'), FLUSHKILL);
    fs.writeFileSync(
      path.join(store, 'flushkill', 'model-config.yaml'),
      'handler: handler.mjs\nbatchSize: 1\nmaxBatchDelay: 0\nminWorkers: 1\nmaxWorkers: 1\n',
    );
    fs.mkdirSync(path.join(store, 'helper'));
    fs.writeFileSync(path.join(store, 'helper', 'handler.mjs'), helperHandler(path.join(storeRoot, 'helpers.pid')));
    fs.writeFileSync(
      path.join(store, 'helper', 'model-config.yaml'),
      'handler: handler.mjs\nbatchSize: 1\nmaxBatchDelay: 0\nminWorkers: 1\nmaxWorkers: 1\n',
    );
    // The example's metrics.yaml with flushes of up to MAX_POINTS datapoints.
    const example = fs.readFileSync(path.join(ROOT, 'examples', 'custom-metrics', 'metrics.yaml'), 'utf8');
    if (/^limits:/m.test(example))
      throw new Error('examples/custom-metrics/metrics.yaml has limits of its own: merge MAX_POINTS into them');
    fs.writeFileSync(
      path.join(storeRoot, 'metrics.yaml'),
      `${example}\nlimits: {max_points_per_flush: ${MAX_POINTS}}\n`,
    );
    server = await startTsserve({
      store,
      args: [
        '--metrics-config',
        path.join(storeRoot, 'metrics.yaml'),
        '--metrics-mode',
        'tslog,prometheus,statsd',
        '--statsd-address',
        `127.0.0.1:${statsd.port}`,
        '--disable-system-metrics',
      ],
    });
  });

  after(() => {
    server?.kill();
    statsd?.stop();
    const pids = path.join(storeRoot, 'helpers.pid');
    for (const pid of fs.existsSync(pids)
      ? fs
          .readFileSync(pids, 'utf8')
          .split('\n')
          .filter((l) => l !== '')
      : []) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    if (storeRoot !== '') fs.rmSync(storeRoot, { recursive: true, force: true });
  });

  it('should count each kill once as a restart, every 200 exactly once in every sink, and no counter ever going down', async () => {
    interface Answer {
      model: string;
      status: number;
      id: string;
      message: string;
    }
    const answers: Answer[] = [];
    const ok = (model: string): number => answers.filter((a) => a.model === model && a.status === 200).length;
    let stop = false;
    const client = async (model: string, seed: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const r = await post(`${server.inference}/predictions/${model}`, mlpInput(seed + i));
        const message =
          typeof r.json === 'object' && r.json !== null ? String((r.json as { message?: unknown }).message) : '';
        answers.push({ model, status: r.status, id: r.requestId ?? '', message });
      }
    };
    // Scrapes back to back while the load runs: each must hold every counter of the one before.
    const decreases: string[] = [];
    let scrapes = 0;
    const scraper = async (): Promise<void> => {
      let prev = monotonicSamples(await scrape(server), true);
      while (!stop) {
        const next = monotonicSamples(await scrape(server), true);
        scrapes++;
        for (const [series, v] of prev) {
          const now = next.get(series);
          if (now === undefined || now < v) decreases.push(`${series}: ${v} → ${String(now)}`);
        }
        prev = next;
      }
    };
    const load = [
      client('custom', 0),
      client('custom', 1000),
      client('custom', 2000),
      client('custom', 3000),
      client('mlp', 4000),
      client('mlp', 5000),
      scraper(),
    ];
    const kills: Record<string, number> = { custom: 0, mlp: 0 };
    const killOnce = async (model: string): Promise<void> => {
      const at = ok(model);
      await until(() => ok(model) >= at + SERVED_BETWEEN, {
        message: `${SERVED_BETWEEN} more ${model} requests answered 200`,
        timeoutMs: 30_000,
        observe: () => ok(model),
      });
      const [w] = await workersOf(server, model);
      process.kill(w.pid, 'SIGKILL');
      kills[model]++;
      await until(
        async () => {
          const ws = await workersOf(server, model);
          return ws.length === 1 && ws[0].pid !== w.pid && ws[0].status !== 'STARTING';
        },
        { message: `a replacement for ${model}'s worker ${w.id}`, timeoutMs: 30_000 },
      );
    };
    for (let k = 0; k < CUSTOM_KILLS; k++) {
      await killOnce('custom');
      if (k < MLP_KILLS) await killOnce('mlp');
    }
    const atEnd = { custom: ok('custom'), mlp: ok('mlp') };
    await until(() => ok('custom') >= atEnd.custom + SERVED_BETWEEN && ok('mlp') >= atEnd.mlp + SERVED_BETWEEN, {
      message: 'requests served after the last kill',
      timeoutMs: 30_000,
    });
    stop = true;
    await Promise.all(load);

    expect(decreases, `over ${scrapes} scrapes`).to.deep.equal([]);
    expect(scrapes).to.be.above(10);
    // A killed worker's batches answer 500 naming it; every other request is a 200.
    const failed = answers.filter((a) => a.status !== 200);
    expect(
      failed.filter(
        (a) =>
          a.status !== 500 ||
          !/^Worker died: worker W-\d+-(custom|mlp)_1\.0 exited \(signal SIGKILL\)$/.test(a.message),
      ),
    ).to.deep.equal([]);

    const text = await scrape(server);
    for (const model of ['custom', 'mlp']) {
      const sent = answers.filter((a) => a.model === model).length;
      // The frontend counts each request at admission: every one, in each sink, exactly once.
      expect(
        sample(text, `ts_inference_requests_total{model_name="${model}",model_version="default",hostname="${H}"}`),
        model,
      ).to.equal(sent);
      await until(
        () => {
          const lines = tslog(server, 'ts_metrics.log', 'ts_inference_requests_total').filter(
            (l) => dim(l, 'model_name') === model,
          );
          return lines.reduce((s, l) => s + l.value, 0) === sent;
        },
        { message: `${model}'s ${sent} requests in ts_metrics.log` },
      );
      await until(() => statsdSum(statsd, 'ts_inference_requests_total', `model_name:${model},`) === sent, {
        message: `${model}'s ${sent} requests at the statsd daemon`,
        observe: () => statsdSum(statsd, 'ts_inference_requests_total', `model_name:${model},`),
      });
      expect(sample(text, `tsserve_worker_restarts_total{model_name="${model}",Hostname="${H}"}`), model).to.equal(
        kills[model],
      );
    }

    // Each incarnation of the custom worker adds 1 in initialize and flushes it before it is ready.
    const inits = `InitializeCallCount{ModelName="custom",Level="Model",Hostname="${H}"}`;
    expect(sample(text, inits)).to.equal(CUSTOM_KILLS + 1);
    expect(
      tslog(server, 'model_metrics.log', 'InitializeCallCount')
        .filter((l) => dim(l, 'ModelName') === 'custom')
        .map((l) => l.value),
    ).to.deep.equal(Array(CUSTOM_KILLS + 1).fill(1));
    await until(() => statsdSum(statsd, 'InitializeCallCount', 'ModelName:custom,') === CUSTOM_KILLS + 1, {
      message: 'InitializeCallCount at the statsd daemon',
      observe: () => statsdSum(statsd, 'InitializeCallCount', 'ModelName:custom,'),
    });

    // The handler observes ExamplePercentMetric per request in postprocess, in the macrotask that
    // sends the batch's result with its metrics: exactly the 200s, each once, with its request id.
    const okIds = answers
      .filter((a) => a.model === 'custom' && a.status === 200)
      .map((a) => a.id)
      .sort();
    const failedIds = new Set(failed.filter((a) => a.model === 'custom').map((a) => a.id));
    expect(sample(text, `ExamplePercentMetric_count{ModelName="custom",Level="Model",Hostname="${H}"}`)).to.equal(
      okIds.length,
    );
    const percent = await until(
      () => {
        const ls = tslog(server, 'model_metrics.log', 'ExamplePercentMetric').filter(
          (l) => dim(l, 'ModelName') === 'custom',
        );
        return ls.length >= okIds.length ? ls : null;
      },
      { message: 'ExamplePercentMetric lines in model_metrics.log' },
    );
    expect(percent.map((l) => l.requestId ?? '').sort()).to.deep.equal(okIds);
    await until(() => statsdCount(statsd, 'ExamplePercentMetric', 'ModelName:custom,') === okIds.length, {
      message: 'ExamplePercentMetric observations at the statsd daemon',
      observe: () => statsdCount(statsd, 'ExamplePercentMetric', 'ModelName:custom,'),
    });

    // InferenceRequestCount is added in preprocess, before the batch's one await (the ONNX run):
    // the worker's 1 s timer can flush it while the run is pending, so a batch killed after that
    // is counted though answered 500. Each line carries its batch's request ids: every 200
    // exactly once, and the only others are requests a kill failed.
    const counted = await until(
      () => {
        const ls = tslog(server, 'model_metrics.log', 'InferenceRequestCount');
        return ls.reduce((s, l) => s + l.value, 0) >= okIds.length ? ls : null;
      },
      { message: 'InferenceRequestCount in model_metrics.log' },
    );
    const ids = counted.flatMap((l) => (l.requestId ?? '').split(','));
    expect(counted.reduce((s, l) => s + l.value, 0)).to.equal(ids.length);
    expect(ids.filter((id) => !failedIds.has(id)).sort()).to.deep.equal(okIds);
    const total = ids.length;
    expect(sample(text, `InferenceRequestCount{Hostname="${H}"}`)).to.equal(total);
    await until(() => statsdSum(statsd, 'InferenceRequestCount', `Hostname:${H}`) === total, {
      message: `InferenceRequestCount ${total} at the statsd daemon`,
      observe: () => statsdSum(statsd, 'InferenceRequestCount', `Hostname:${H}`),
    });
  });

  /**
   * Has flushkill's worker SIGKILL itself at `when` of a request: its 500 names the worker; waits
   * for a READY replacement. Resolves to the killed request's id.
   */
  async function killFlushkill(when: 'after-flush' | 'mid-flush' | 'after-timer'): Promise<string | null> {
    const [w] = await workersOf(server, 'flushkill');
    const killed = await post(`${server.inference}/predictions/flushkill`, { kill: when });
    expect([killed.status, killed.json]).to.deep.equal([
      500,
      { code: 500, type: 'InternalServerException', message: `Worker died: worker ${w.id} exited (signal SIGKILL)` },
    ]);
    await until(
      async () => {
        const ws = await workersOf(server, 'flushkill');
        return ws.length === 1 && ws[0].pid !== w.pid && ws[0].status === 'READY';
      },
      { message: "a replacement for flushkill's worker", timeoutMs: 30_000 },
    );
    return killed.requestId;
  }

  it('should deliver what a worker flushed right before it was SIGKILLed, to every sink, and lose only what it recorded after', async () => {
    await killFlushkill('after-flush');
    const served = await Promise.all([1, 2, 3].map(() => post(`${server.inference}/predictions/flushkill`, {})));
    expect(served.map((r) => r.status)).to.deep.equal([200, 200, 200]);

    // The 5 and the 50 flushed before the kill are there; the 7 and the 60 recorded after are not.
    const text = await scrape(server);
    expect(sample(text, `PostprocessCallCount{ModelName="flushkill",Level="Model",Hostname="${H}"}`)).to.equal(8);
    expect(sample(text, `ExamplePercentMetric_count{ModelName="flushkill",Level="Model",Hostname="${H}"}`)).to.equal(4);
    expect(sample(text, `ExamplePercentMetric_sum{ModelName="flushkill",Level="Model",Hostname="${H}"}`)).to.equal(200);
    expect(sample(text, `tsserve_worker_restarts_total{model_name="flushkill",Hostname="${H}"}`)).to.equal(1);
    const lines = await until(
      () => {
        const ls = tslog(server, 'model_metrics.log', 'PostprocessCallCount').filter(
          (l) => dim(l, 'ModelName') === 'flushkill',
        );
        return ls.length >= 4 ? ls : null;
      },
      { message: "flushkill's PostprocessCallCount lines" },
    );
    expect(lines.map((l) => l.value)).to.deep.equal([5, 1, 1, 1]);
    const observed = tslog(server, 'model_metrics.log', 'ExamplePercentMetric').filter(
      (l) => dim(l, 'ModelName') === 'flushkill',
    );
    expect(observed.map((l) => l.value)).to.deep.equal([50, 50, 50, 50]);
    await until(() => statsdSum(statsd, 'PostprocessCallCount', 'ModelName:flushkill,') === 8, {
      message: 'PostprocessCallCount 8 at the statsd daemon',
      observe: () => statsdSum(statsd, 'PostprocessCallCount', 'ModelName:flushkill,'),
    });
    await until(() => statsdCount(statsd, 'ExamplePercentMetric', 'ModelName:flushkill,') === 4, {
      message: '4 ExamplePercentMetric observations at the statsd daemon',
    });
    expect(statsd.lines.filter((l) => l.startsWith('ExamplePercentMetric:60|'))).to.deep.equal([]);
  });
  it('should drop whole, and count nowhere, a flush the kill cut mid-write, deliver the one before it, and serve on', async () => {
    const before = await scrape(server);
    const series = `PostprocessCallCount{ModelName="flushkill",Level="Model",Hostname="${H}"}`;
    await killFlushkill('mid-flush');
    expect((await post(`${server.inference}/predictions/flushkill`, {})).status).to.equal(200);

    // The 3 flushed whole before the cut message are counted; none of the cut message's points are.
    const text = await scrape(server);
    expect((sample(text, series) ?? 0) - (sample(before, series) ?? 0)).to.equal(4);
    expect(sample(text, `tsserve_worker_restarts_total{model_name="flushkill",Hostname="${H}"}`)).to.equal(2);
    // Not even seen as a malformed message: the channel never delivers part of one.
    expect(text.split('\n').filter((l) => l.startsWith('tsserve_datapoints_dropped_total{'))).to.deep.equal([]);
    const lines = await until(
      () => {
        const ls = tslog(server, 'model_metrics.log', 'PostprocessCallCount').filter(
          (l) => dim(l, 'ModelName') === 'flushkill',
        );
        return ls.length >= 6 ? ls : null;
      },
      { message: "flushkill's PostprocessCallCount lines" },
    );
    expect(lines.map((l) => l.value)).to.deep.equal([5, 1, 1, 1, 3, 1]);
    await until(() => statsdSum(statsd, 'PostprocessCallCount', 'ModelName:flushkill,') === 12, {
      message: 'PostprocessCallCount 12 at the statsd daemon',
      observe: () => statsdSum(statsd, 'PostprocessCallCount', 'ModelName:flushkill,'),
    });
  });
  it("should count what the worker's timer flushed while a batch awaited, though the kill then failed the batch", async () => {
    const before = await scrape(server);
    const series = `PostprocessCallCount{ModelName="flushkill",Level="Model",Hostname="${H}"}`;
    const killedId = await killFlushkill('after-timer');
    expect((await post(`${server.inference}/predictions/flushkill`, {})).status).to.equal(200);

    // The 2 of the failed request are counted (docs/ipc.md, what a killed worker loses), once.
    const text = await scrape(server);
    expect((sample(text, series) ?? 0) - (sample(before, series) ?? 0)).to.equal(3);
    expect(sample(text, `tsserve_worker_restarts_total{model_name="flushkill",Hostname="${H}"}`)).to.equal(3);
    const lines = await until(
      () => {
        const ls = tslog(server, 'model_metrics.log', 'PostprocessCallCount').filter(
          (l) => dim(l, 'ModelName') === 'flushkill',
        );
        return ls.length >= 8 ? ls : null;
      },
      { message: "flushkill's PostprocessCallCount lines" },
    );
    expect(lines.map((l) => l.value)).to.deep.equal([5, 1, 1, 1, 3, 1, 2, 1]);
    expect(lines[6]!.requestId).to.equal(killedId);
    await until(() => statsdSum(statsd, 'PostprocessCallCount', 'ModelName:flushkill,') === 15, {
      message: 'PostprocessCallCount 15 at the statsd daemon',
      observe: () => statsdSum(statsd, 'PostprocessCallCount', 'ModelName:flushkill,'),
    });
  });
  it('should replace a SIGKILLed worker whose stdout and stderr a process it started holds open (regression: it stayed BUSY for as long as that process lived)', async () => {
    const [w] = await workersOf(server, 'helper');
    process.kill(w.pid, 'SIGKILL');
    await until(
      async () => {
        const ws = await workersOf(server, 'helper');
        return ws.length === 1 && ws[0].pid !== w.pid && ws[0].status === 'READY';
      },
      { message: "a replacement for helper's worker", timeoutMs: 20_000 },
    );
    expect((await post(`${server.inference}/predictions/helper`, {})).status).to.equal(200);
    const text = await scrape(server);
    expect(sample(text, `tsserve_worker_restarts_total{model_name="helper",Hostname="${H}"}`)).to.equal(1);
    // The grace's bound is counted, not only logged.
    expect(
      sample(text, `tsserve_worker_output_faults_total{model_name="helper",reason="stdio_held",Hostname="${H}"}`),
    ).to.equal(1);
    expect(
      server
        .output()
        .split('\n')
        .filter((l) => l.includes('stdout and stderr are still open'))
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).to.deep.equal([
      `worker ${w.id} exited (signal SIGKILL) and its IPC channel closed, but its stdout and stderr are still open 1000 ms later (a process it started holds them): handled as gone`,
    ]);
  });
});
