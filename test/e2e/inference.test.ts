/**
 * The real server with tslog + prometheus: exact request counts on /metrics, in the tslog
 * files, in promtool's check and in a real Prometheus scraping it.
 */
import { expect } from 'chai';
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseTslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import {
  call,
  freePort,
  generateStore,
  haveBinary,
  mlpInput,
  post,
  sample,
  scrape,
  startTsserve,
  tempDir,
} from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';
import { configArgs } from './config-args.js';

const H = os.hostname();
const N = 12;

/** The sum of every ts_inference_requests_total series (every model version) in a scrape. */
function requestsCounted(text: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith('ts_inference_requests_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('tsserve start (tslog + prometheus, real workers)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  /** What the set-up requests got back: N good predictions, 2 bad JSON, 2 wrong lengths. */
  const statuses: number[] = [];
  const goodBodies: unknown[] = [];
  const admittedIds: string[] = [];

  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp']),
      args: [...configArgs(), '--metrics-mode', 'tslog,prometheus', '--disable-system-metrics'],
    });
    // N good predictions, concurrently so the batcher forms real batches.
    const good = await Promise.all(
      Array.from({ length: N }, (_v, i) => post(`${server.inference}/predictions/mlp`, mlpInput(i))),
    );
    for (const r of good) {
      statuses.push(r.status);
      goodBodies.push(r.json);
      admittedIds.push(r.requestId ?? '');
    }
    // 2 bad JSON and 2 wrong lengths, all refused before admission (the frontend checks a
    // built-in onnx model's input against its graph: a wrong length never reaches a worker).
    for (const body of ['{"not json', '[1,2', [1, 2, 3], mlpInput(1).concat([5])])
      statuses.push((await post(`${server.inference}/predictions/mlp`, body)).status);
  });

  after(async () => {
    server?.kill();
  });

  it('should answer every good prediction with 10 probabilities and a request id', () => {
    expect(statuses.slice(0, N)).to.deep.equal(Array(N).fill(200));
    expect(
      goodBodies.map((b) => [
        Array.isArray(b) ? b.length : b,
        Array.isArray(b) && Math.abs((b as number[]).reduce((x, y) => x + y, 0) - 1) < 1e-5,
      ]),
    ).to.deep.equal(Array(N).fill([10, true]));
    expect(new Set(admittedIds).size).to.equal(N);
    expect(admittedIds.filter((id) => !/^[0-9a-f-]{36}$/.test(id))).to.deep.equal([]);
  });

  it('should answer bad JSON and wrong input lengths with 400 JSON errors', async () => {
    expect(statuses.slice(N)).to.deep.equal([400, 400, 400, 400]);
    const r = await post(`${server.inference}/predictions/mlp`, '{"not json');
    // The same text on every Node line (the server drops the "(line 1 column 11)" Node 24 adds).
    expect([r.status, r.json]).to.deep.equal([
      400,
      {
        code: 400,
        type: 'BadRequestException',
        message: 'invalid JSON body: Unterminated string in JSON at position 10',
      },
    ]);
    const w = await post(`${server.inference}/predictions/mlp`, [1, 2, 3]);
    expect([w.status, w.json]).to.deep.equal([
      400,
      {
        code: 400,
        type: 'BadRequestException',
        message: "input 'input': expected [784] (a row of the model's FP32 [N,784]), got [3]",
      },
    ]);
  });

  it('should answer an unknown model with 404 and /ping with Healthy', async () => {
    const r = await post(`${server.inference}/predictions/nope`, mlpInput(0));
    expect(r.status).to.equal(404);
    expect(r.json).to.deep.equal({ code: 404, type: 'ResourceNotFoundException', message: 'Model not found: nope' });
    const p = await call('GET', `${server.inference}/ping`);
    expect(p).to.deep.equal({ status: 200, json: { status: 'Healthy' } });
  });

  it('should answer a body over --max-request-size with 413', async () => {
    const r = await post(`${server.inference}/predictions/mlp`, JSON.stringify(Array(300_000).fill(0.5)));
    expect([r.status, r.json]).to.deep.equal([
      413,
      {
        code: 413,
        type: 'RequestEntityTooLargeException',
        message: 'request body exceeds the limit of 1048576 bytes (--max-request-size)',
      },
    ]);
  });

  it('should count admitted requests exactly in ts_inference_requests_total and responses in Requests2XX/4XX', async () => {
    const before = await scrape(server);
    // 3 good (admitted); a wrong length, bad JSON, unknown model and oversized (not admitted), and a ping.
    const good = await Promise.all([0, 1, 2].map((i) => post(`${server.inference}/predictions/mlp`, mlpInput(i))));
    const others = [
      await post(`${server.inference}/predictions/mlp`, [1, 2, 3]),
      await post(`${server.inference}/predictions/mlp`, '{"not json'),
      await post(`${server.inference}/predictions/nope`, mlpInput(0)),
      await post(`${server.inference}/predictions/mlp`, JSON.stringify(Array(300_000).fill(0.5))),
      await call('GET', `${server.inference}/ping`),
    ];
    expect([...good, ...others].map((r) => r.status)).to.deep.equal([200, 200, 200, 400, 400, 404, 413, 200]);
    const after = await scrape(server);
    const delta = (series: string): number => (sample(after, series) ?? 0) - (sample(before, series) ?? 0);
    expect(delta(`ts_inference_requests_total{model_name="mlp",model_version="default",hostname="${H}"}`)).to.equal(3);
    expect(delta(`Requests2XX{Level="Host",Hostname="${H}"}`)).to.equal(4);
    expect(delta(`Requests4XX{Level="Host",Hostname="${H}"}`)).to.equal(4);
    expect(sample(after, `Requests5XX{Level="Host",Hostname="${H}"}`)).to.equal(null); // no 5xx answered: no series yet
    expect(
      delta(`ts_inference_latency_microseconds{model_name="mlp",model_version="default",hostname="${H}"}`),
    ).to.be.greaterThan(0);
    // Scrapes are not counted: a second scrape reads the same Requests2XX.
    expect(sample(await scrape(server), `Requests2XX{Level="Host",Hostname="${H}"}`)).to.equal(
      sample(after, `Requests2XX{Level="Host",Hostname="${H}"}`),
    );
  });

  it('should filter families with ?name[]=', async () => {
    const text = await scrape(server, '?name[]=ts_inference_latency_microseconds');
    expect(text.split('\n').filter((l) => l.startsWith('# TYPE '))).to.deep.equal([
      '# TYPE ts_inference_latency_microseconds counter',
    ]);
    expect(
      text
        .split('\n')
        .filter((l) => l !== '' && !l.startsWith('#'))
        .map((l) => l.split(' ')[0]),
    ).to.deep.equal([`ts_inference_latency_microseconds{model_name="mlp",model_version="default",hostname="${H}"}`]);
  });

  it('should write one ts_inference_requests_total line per admitted request and HandlerTime lines with the answered request ids', async () => {
    const tsFile = path.join(server.logDir, 'ts_metrics.log');
    const modelFile = path.join(server.logDir, 'model_metrics.log');
    const read = (file: string): string[] =>
      fs.existsSync(file)
        ? fs
            .readFileSync(file, 'utf8')
            .split('\n')
            .filter((l) => l !== '')
        : [];
    const requestLines = (): string[] => read(tsFile).filter((l) => l.includes(' - ts_inference_requests_total.'));
    // Lines are buffered: wait until what the server counted so far is on disk, then count ours from there.
    const counted = requestsCounted(await scrape(server));
    await until(() => requestLines().length === counted, {
      message: `${String(counted)} ts_inference_requests_total lines`,
      observe: () => requestLines().length,
    });
    const from = requestLines().length;
    const K = 4;
    const mine = await Promise.all(
      Array.from({ length: K }, (_v, i) => post(`${server.inference}/predictions/mlp`, mlpInput(i))),
    );
    expect(mine.map((r) => r.status)).to.deep.equal(Array(K).fill(200));
    const ids = mine.map((r) => r.requestId ?? '');

    const lines = await until(
      () => {
        const ls = requestLines();
        return ls.length === from + K ? ls.slice(from) : null;
      },
      { message: `${K} more ts_inference_requests_total lines`, observe: () => requestLines().length - from },
    );
    for (const l of read(tsFile)) expect(parseTslogLine(l), l).to.not.equal(null);
    const req = lines.map((l) => parseTslogLine(l)!);
    expect(req.map((p) => [p.name, p.unit, p.valueText, p.dimensions, p.hostname, p.requestId])).to.deep.equal(
      Array(K).fill([
        'ts_inference_requests_total',
        'Count',
        '1.0',
        [
          ['model_name', 'mlp'],
          ['model_version', 'default'],
        ],
        H,
        null,
      ]),
    );

    // Model metrics travel worker → IPC → frontend → buffered file. Nothing else is in flight, so
    // the HandlerTime lines that name one of these requests name these requests only.
    const handlerIdsOf = (ls: readonly string[]): Set<string> => {
      const out = new Set<string>();
      for (const p of ls.map((l) => parseTslogLine(l))) {
        if (p === null || p.name !== 'HandlerTime') continue;
        const lineIds = (p.requestId ?? '').split(',');
        if (lineIds.some((id) => ids.includes(id))) for (const id of lineIds) out.add(id);
      }
      return out;
    };
    const handlerIds = await until(
      () => {
        const h = handlerIdsOf(read(modelFile));
        return ids.every((id) => h.has(id)) ? h : null;
      },
      { message: 'HandlerTime lines for every request', observe: () => [...handlerIdsOf(read(modelFile))] },
    );
    for (const l of read(modelFile)) expect(parseTslogLine(l), l).to.not.equal(null);
    expect([...handlerIds].sort()).to.deep.equal([...ids].sort());
  });

  it('should pass promtool check metrics on the full /metrics', async function () {
    if (!haveBinary('promtool')) {
      console.warn(
        'SKIPPED: promtool not found — install the Debian package `prometheus` (apt-get install -y prometheus)',
      );
      this.skip();
    }
    const text = await scrape(server);
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // promtool exits 3 for lint advice (TorchServe's counters lack `_total`), 1 for a parse error.
    const errors = (r.stdout + r.stderr).split('\n').filter((l) => /error/i.test(l));
    expect(errors).to.deep.equal([]);
    expect([0, 3], `exit ${String(r.status)}`).to.include(r.status);
  });

  it('should be scraped by a real Prometheus: sum(ts_inference_requests_total) equals what tsserve counted', async function () {
    if (!haveBinary('prometheus')) {
      console.warn(
        'SKIPPED: prometheus not found — install the Debian package `prometheus` (apt-get install -y prometheus)',
      );
      this.skip();
    }
    const dir = tempDir('prom');
    const port = await freePort();
    fs.writeFileSync(
      path.join(dir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: tsserve',
        '    static_configs:',
        `      - targets: ['${server.metrics.replace('http://', '')}']`,
        '',
      ].join('\n'),
    );
    const query = 'ts_inference_requests_total';
    // Every series of the family (one test adds model_version="1.0"): Prometheus sums the same.
    const counted = requestsCounted(await scrape(server));
    const prom = spawn(
      'prometheus',
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: 'ignore', detached: true },
    );
    try {
      let value: number | null = null;
      await until(
        async () => {
          try {
            const res = await fetch(
              `http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(`sum(${query})`)}`,
            );
            const body = (await res.json()) as { data?: { result?: Array<{ value: [number, string] }> } };
            const r = body.data?.result ?? [];
            value = r.length > 0 ? Number(r[0].value[1]) : null;
          } catch {
            value = null;
          } // not serving yet
          return value === counted;
        },
        { message: `Prometheus to read sum(${query}) = ${String(counted)}`, timeoutMs: 60_000, observe: () => value },
      );
      expect(value).to.equal(counted);
    } finally {
      try {
        process.kill(-(prom.pid as number), 'SIGKILL');
      } catch {
        /* gone */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should serve /predictions/mlp/1.0 (the default version) labelled model_version="1.0", keep "default" for /predictions/mlp, and 404 a wrong version', async () => {
    const list = await call('GET', `${server.management}/models`);
    expect(list).to.deep.equal({
      status: 200,
      json: { models: [{ modelName: 'mlp', modelVersion: '1.0', modelUrl: 'mlp' }] },
    });
    const desc = (await call('GET', `${server.management}/models/mlp/1.0`)).json as Array<{
      modelVersion: string;
      workers: Array<{ id: string }>;
    }>;
    expect(desc[0].modelVersion).to.equal('1.0');
    expect(desc[0].workers.length).to.equal(1);
    expect(desc[0].workers[0].id).to.match(/^W-9\d{3}-mlp_1\.0$/);
    const before = await scrape(server);
    const V = 3;
    const versioned = await Promise.all(
      Array.from({ length: V }, (_v, i) => post(`${server.inference}/predictions/mlp/1.0`, mlpInput(i))),
    );
    expect(versioned.map((r) => r.status)).to.deep.equal(Array(V).fill(200));
    const unversioned = await post(`${server.inference}/predictions/mlp`, mlpInput(7));
    expect(unversioned.status).to.equal(200);
    const wrong = await post(`${server.inference}/predictions/mlp/2.0`, mlpInput(0));
    expect(wrong).to.deep.equal({
      status: 404,
      json: { code: 404, type: 'ResourceNotFoundException', message: 'Model version 2.0 not found for model mlp' },
      requestId: wrong.requestId,
    });
    const wrongDesc = await call('GET', `${server.management}/models/mlp/2.0`);
    expect(wrongDesc).to.deep.equal({
      status: 404,
      json: { code: 404, type: 'ResourceNotFoundException', message: 'Model version 2.0 not found for model mlp' },
    });
    const after = await scrape(server);
    const total = (text: string, version: string): number =>
      sample(text, `ts_inference_requests_total{model_name="mlp",model_version="${version}",hostname="${H}"}`) ?? 0;
    expect(total(after, '1.0') - total(before, '1.0')).to.equal(V);
    expect(total(after, 'default') - total(before, 'default')).to.equal(1);
    expect(total(after, '2.0')).to.equal(0);
    // The two 404s: the prediction (inference port) and the describe (management port).
    expect(
      sample(after, `Requests4XX{Level="Host",Hostname="${H}"}`)! -
        sample(before, `Requests4XX{Level="Host",Hostname="${H}"}`)!,
    ).to.equal(2);
    // TorchServe's `/models/{name}/all`: every version (one here), as the plain description.
    const all = await call('GET', `${server.management}/models/mlp/all`);
    expect([
      all.status,
      (all.json as Array<{ modelVersion: string }>).map((d) => d.modelVersion),
      (await call('GET', `${server.management}/models/nope/all`)).status,
    ]).to.deep.equal([200, ['1.0'], 404]);
  });
});
