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
  call, freePort, generateStore, haveBinary, mlpInput, post, sample, scrape, startTsserve, tempDir,
} from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';
import { configArgs } from './config-args.js';

const H = os.hostname();
const N = 12;

describe('tsserve start (tslog + prometheus, real workers)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  const statuses: number[] = [];
  const admittedIds: string[] = [];
  let badJson = 0;
  let wrongLength = 0;

  before(async () => {
    server = await startTsserve({ store: generateStore(['mlp']), args: [...configArgs(), '--metrics-mode', 'tslog,prometheus', '--disable-system-metrics'] });
    // N good predictions, concurrently so the batcher forms real batches.
    const good = await Promise.all(Array.from({ length: N }, (_v, i) => post(`${server.inference}/predictions/mlp`, mlpInput(i))));
    for (const r of good) { statuses.push(r.status); admittedIds.push(r.requestId ?? ''); }
    // K bad requests: 2 bad JSON (rejected before admission), 2 wrong lengths (admitted, 400 from the worker).
    for (const body of ['{"not json', '[1,2']) { const r = await post(`${server.inference}/predictions/mlp`, body); statuses.push(r.status); badJson++; }
    for (const body of [[1, 2, 3], mlpInput(1).concat([5])]) {
      const r = await post(`${server.inference}/predictions/mlp`, body);
      statuses.push(r.status); admittedIds.push(r.requestId ?? ''); wrongLength++;
    }
  });

  after(async () => { server?.kill(); });

  it('should answer every good prediction with 10 probabilities and a request id', () => {
    expect(statuses.slice(0, N)).to.deep.equal(Array(N).fill(200));
    expect(new Set(admittedIds).size).to.equal(N + wrongLength);
  });

  it('should answer bad JSON and wrong input lengths with 400 JSON errors', async () => {
    expect(statuses.slice(N)).to.deep.equal([400, 400, 400, 400]);
    const r = await post(`${server.inference}/predictions/mlp`, '{"not json');
    statuses.push(r.status); badJson++;
    expect(r.json).to.include({ code: 400, type: 'BadRequestException' });
  });

  it('should answer an unknown model with 404 and /ping with Healthy', async () => {
    const r = await post(`${server.inference}/predictions/nope`, mlpInput(0));
    statuses.push(r.status);
    expect(r.status).to.equal(404);
    expect(r.json).to.deep.equal({ code: 404, type: 'ResourceNotFoundException', message: 'Model not found: nope' });
    const p = await call('GET', `${server.inference}/ping`);
    statuses.push(p.status);
    expect(p).to.deep.equal({ status: 200, json: { status: 'Healthy' } });
  });

  it('should answer a body over --max-request-size with 413', async () => {
    const r = await post(`${server.inference}/predictions/mlp`, JSON.stringify(Array(300_000).fill(0.5)));
    statuses.push(r.status);
    expect(r.status).to.equal(413);
  });

  it('should count admitted requests exactly in ts_inference_requests_total and responses in Requests2XX/4XX', async () => {
    const text = await scrape(server);
    const admitted = N + wrongLength;
    expect(sample(text, `ts_inference_requests_total{model_name="mlp",model_version="default",hostname="${H}"}`)).to.equal(admitted);
    expect(sample(text, `Requests2XX{Level="Host",Hostname="${H}"}`)).to.equal(statuses.filter((s) => s >= 200 && s < 300).length);
    expect(sample(text, `Requests4XX{Level="Host",Hostname="${H}"}`)).to.equal(statuses.filter((s) => s >= 400 && s < 500).length);
    expect(sample(text, `Requests4XX{Level="Host",Hostname="${H}"}`)).to.equal(badJson + wrongLength + 2);
    // No 5xx answered: the series has no sample (or reads 0 if the sink pre-creates children).
    expect([null, 0]).to.include(sample(text, `Requests5XX{Level="Host",Hostname="${H}"}`));
    expect(sample(text, `ts_inference_latency_microseconds{model_name="mlp",model_version="default",hostname="${H}"}`)).to.be.greaterThan(0);
    // Scrapes are not counted: a second scrape reads the same Requests2XX.
    expect(sample(await scrape(server), `Requests2XX{Level="Host",Hostname="${H}"}`)).to.equal(statuses.filter((s) => s >= 200 && s < 300).length);
  });

  it('should filter families with ?name[]=', async () => {
    const text = await scrape(server, '?name[]=ts_inference_latency_microseconds');
    expect(text).to.contain('# TYPE ts_inference_latency_microseconds counter');
    expect(text).to.not.contain('ts_inference_requests_total');
  });

  it('should write one ts_inference_requests_total line per admitted request and HandlerTime lines with the answered request ids', async () => {
    const tsLines = await until(() => {
      const lines = fs.readFileSync(path.join(server.logDir, 'ts_metrics.log'), 'utf8').split('\n').filter((l) => l !== '');
      return lines.filter((l) => l.includes(' - ts_inference_requests_total.')).length === N + wrongLength ? lines : null;
    }, { message: 'ts_metrics.log lines' });
    for (const l of tsLines) expect(parseTslogLine(l), l).to.not.equal(null);
    const req = tsLines.map((l) => parseTslogLine(l)!).filter((p) => p.name === 'ts_inference_requests_total');
    expect(req.map((p) => [p.unit, p.valueText, p.hostname, p.requestId])).to.deep.equal(Array(N + wrongLength).fill(['Count', '1.0', H, null]));
    expect(req[0].dimensions).to.deep.equal([['model_name', 'mlp'], ['model_version', 'default']]);

    // Model metrics travel worker → IPC → frontend → buffered file: wait until every id is in.
    const modelFile = path.join(server.logDir, 'model_metrics.log');
    const handlerIdsOf = (lines: readonly string[]): Set<string> => {
      const ids = new Set<string>();
      for (const p of lines.map((l) => parseTslogLine(l)).filter((x) => x !== null && x.name === 'HandlerTime')) {
        for (const id of (p?.requestId ?? '').split(',')) ids.add(id);
      }
      return ids;
    };
    const modelLines = await until(() => {
      if (!fs.existsSync(modelFile)) return null;
      const lines = fs.readFileSync(modelFile, 'utf8').split('\n').filter((l) => l !== '');
      return admittedIds.every((id) => handlerIdsOf(lines).has(id)) ? lines : null;
    }, { message: 'HandlerTime lines for every admitted request' });
    for (const l of modelLines) expect(parseTslogLine(l), l).to.not.equal(null);
    const handlerIds = handlerIdsOf(modelLines);
    expect([...handlerIds].sort()).to.deep.equal([...admittedIds].sort());
  });

  it('should pass promtool check metrics on the full /metrics', async function () {
    if (!haveBinary('promtool')) {
      console.warn('SKIPPED: promtool not found — install the Debian package `prometheus` (apt-get install -y prometheus)');
      this.skip();
    }
    const text = await scrape(server);
    const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    const errors = (r.stdout + r.stderr).split('\n').filter((l) => /error/i.test(l));
    expect(errors).to.deep.equal([]);
    expect(r.status === 0 || (r.stdout + r.stderr).trim().split('\n').every((l) => l === '' || !/error/i.test(l))).to.equal(true);
  });

  it('should be scraped by a real Prometheus: sum(ts_inference_requests_total) equals the admitted requests', async function () {
    if (!haveBinary('prometheus')) {
      console.warn('SKIPPED: prometheus not found — install the Debian package `prometheus` (apt-get install -y prometheus)');
      this.skip();
    }
    const dir = tempDir('prom');
    const port = await freePort();
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
      'global:', '  scrape_interval: 1s', 'scrape_configs:', '  - job_name: tsserve',
      '    static_configs:', `      - targets: ['${server.metrics.replace('http://', '')}']`, '',
    ].join('\n'));
    const prom = spawn('prometheus', [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: 'ignore', detached: true });
    try {
      const value = await until(async () => {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent('sum(ts_inference_requests_total)')}`);
          const body = (await res.json()) as { data?: { result?: Array<{ value: [number, string] }> } };
          const r = body.data?.result ?? [];
          return r.length > 0 ? Number(r[0].value[1]) : null;
        } catch { return null; }
      }, { message: 'Prometheus to scrape tsserve', timeoutMs: 60_000 });
      expect(value).to.equal(N + wrongLength);
    } finally {
      try { process.kill(-(prom.pid as number), 'SIGKILL'); } catch { /* gone */ }
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  // Runs last: the exact per-request counts above cover the unversioned requests only.
  it('should serve /predictions/mlp/1.0 (the default version) labelled model_version="1.0", keep "default" for /predictions/mlp, and 404 a wrong version', async () => {
    const list = await call('GET', `${server.management}/models`);
    expect(list).to.deep.equal({ status: 200, json: { models: [{ modelName: 'mlp', modelVersion: '1.0', modelUrl: 'mlp' }] } });
    const desc = (await call('GET', `${server.management}/models/mlp/1.0`)).json as Array<{ modelVersion: string; workers: Array<{ id: string }> }>;
    expect(desc[0].modelVersion).to.equal('1.0');
    expect(desc[0].workers.map((w) => w.id)).to.deep.equal([desc[0].workers[0].id]);
    expect(desc[0].workers[0].id).to.match(/^W-9\d{3}-mlp_1\.0$/);
    const before = await scrape(server);
    const V = 3;
    const versioned = await Promise.all(Array.from({ length: V }, (_v, i) => post(`${server.inference}/predictions/mlp/1.0`, mlpInput(i))));
    expect(versioned.map((r) => r.status)).to.deep.equal(Array(V).fill(200));
    const unversioned = await post(`${server.inference}/predictions/mlp`, mlpInput(7));
    expect(unversioned.status).to.equal(200);
    const wrong = await post(`${server.inference}/predictions/mlp/2.0`, mlpInput(0));
    expect(wrong).to.deep.equal({ status: 404, json: { code: 404, type: 'ResourceNotFoundException', message: 'Model version 2.0 not found for model mlp' }, requestId: wrong.requestId });
    const wrongDesc = await call('GET', `${server.management}/models/mlp/2.0`);
    expect(wrongDesc).to.deep.equal({ status: 404, json: { code: 404, type: 'ResourceNotFoundException', message: 'Model version 2.0 not found for model mlp' } });
    const after = await scrape(server);
    const total = (text: string, version: string): number => sample(text, `ts_inference_requests_total{model_name="mlp",model_version="${version}",hostname="${H}"}`) ?? 0;
    expect(total(after, '1.0') - total(before, '1.0')).to.equal(V);
    expect(total(after, 'default') - total(before, 'default')).to.equal(1);
    expect(total(after, '2.0')).to.equal(0);
    // The two 404s: the prediction (inference port) and the describe (management port).
    expect(sample(after, `Requests4XX{Level="Host",Hostname="${H}"}`)! - sample(before, `Requests4XX{Level="Host",Hostname="${H}"}`)!).to.equal(2);
  });
});
