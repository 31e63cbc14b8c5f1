/**
 * `--api-server-count 2` end to end: two front processes share the inference port, the
 * primary keeps the workers and the sinks. Under load the counters of /metrics equal the
 * client's counts exactly and never go down; process metrics carry one `pid` per process;
 * ts_metrics.log is written once per request; generation streams through a front; SIGTERM
 * drains; a killed front is replaced with the counts kept.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import * as os from 'os';
import * as zlib from 'zlib';
import { generateStore, mlpInput, post, startTsserve } from './harness.js';
import { freshPost } from './fresh-post.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

/** The value of one sample line of the exposition (0 when absent). */
function sample(text: string, line: string): number {
  for (const l of text.split('\n')) if (l.startsWith(line + ' ')) return Number(l.slice(line.length + 1));
  return 0;
}

const INFER = 'ts_inference_requests_total{model_name="mlp",model_version="default",hostname="vm"}';
const HTTP_OK = 'http_requests_total{handler="/predictions/{model}[/{version}]",method="POST",status="2xx"}';

/** Every counter sample of the exposition (name+labels → value). */
function counters(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const types = new Map<string, string>();
  for (const l of text.split('\n')) {
    const t = /^# TYPE (\S+) (\S+)$/.exec(l);
    if (t !== null) {
      types.set(t[1], t[2]);
      continue;
    }
    if (l === '' || l.startsWith('#')) continue;
    const name = /^[a-zA-Z_:][\w:]*/.exec(l)?.[0] ?? '';
    const family = types.has(name) ? name : name.replace(/_(total|count|sum|bucket)$/, '');
    const ty = types.get(family) ?? types.get(name);
    if ((ty === 'counter' || ty === 'histogram') && !l.includes('pid="'))
      out.set(l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1)));
  }
  return out;
}

describe('api servers (--api-server-count 2)', function () {
  this.timeout(180_000);
  let server: Tsserve;
  const host = os.hostname();
  const infer = INFER.replace('hostname="vm"', `hostname="${host}"`);

  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp', 'tiny-lm']),
      args: ['--api-server-count', '2', '--metrics-mode', 'tslog,prometheus'],
    });
  });
  after(() => server.kill());

  const scrape = async (): Promise<string> => (await fetch(`${server.metrics}/metrics`)).text();

  it('should count every request exactly once, with counters never going down during the load', async () => {
    const before = await scrape();
    const base = { infer: sample(before, infer), http: sample(before, HTTP_OK) };
    const body = JSON.stringify(mlpInput(3));
    const N = 400;
    let ok = 0;
    let sent = 0;
    let previous = counters(before);
    const decreases: string[] = [];
    const worker = async (): Promise<void> => {
      while (sent < N) {
        sent++;
        const r = await fetch(`${server.inference}/predictions/mlp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await r.arrayBuffer();
        if (r.status === 200) ok++;
      }
    };
    const load = Promise.all(Array.from({ length: 16 }, worker));
    let loading = true;
    void load.then(() => {
      loading = false;
    });
    while (loading) {
      const now = counters(await scrape());
      for (const [k, v] of previous) if ((now.get(k) ?? v) < v) decreases.push(`${k}: ${v} -> ${String(now.get(k))}`);
      previous = now;
    }
    await load;
    expect(ok).to.equal(N);
    const final = await until(
      async () => {
        const t = await scrape();
        return sample(t, infer) - base.infer === N && sample(t, HTTP_OK) - base.http === N ? t : null;
      },
      { message: `ts_inference_requests_total and http_requests_total up by ${N}`, observe: () => previous },
    );
    expect([sample(final, infer) - base.infer, sample(final, HTTP_OK) - base.http]).to.deep.equal([N, N]);
    expect(decreases).to.deep.equal([]);
  });

  it('should show process metrics of the primary and both fronts, each with its pid', async () => {
    const text = await scrape();
    const pids = new Set([...text.matchAll(/^process_cpu_user_seconds_total\{pid="(\d+)"\} /gm)].map((m) => m[1]));
    expect(pids.size).to.equal(3);
    expect(pids.has(String(server.proc.pid))).to.equal(true);
  });

  it('should write ts_metrics.log from the primary alone, its ts_inference_requests_total values summing to the requests', async () => {
    const file = path.join(server.logDir, 'ts_metrics.log');
    const before = await scrape();
    // The sum of the logged values (the sink may fold a flush's points into one line).
    const count = (): number =>
      fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .reduce((n, l) => n + Number(/^\S+ - ts_inference_requests_total\.[^:]*:([\d.]+)\|/.exec(l)?.[1] ?? 0), 0);
    const lines0 = await until(() => (count() === sample(before, infer) ? count() : null), {
      message: 'ts_metrics.log caught up',
      observe: count,
    });
    for (let i = 0; i < 20; i++)
      expect((await post(`${server.inference}/predictions/mlp`, mlpInput(i))).status).to.equal(200);
    await until(() => count() === lines0 + 20, {
      message: '20 more ts_inference_requests_total lines',
      observe: count,
    });
    expect(count()).to.equal(lines0 + 20);
  });

  it('should stream /v1/completions through a front, chunk by chunk', async () => {
    const r = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // Greedy: six ASCII bytes, one chunk each. (Sampled, a byte of a multi-byte UTF-8 character
      // waits for the rest of it, and two tokens come as one chunk.)
      body: JSON.stringify({
        model: 'tiny-lm',
        prompt: 'Through a front',
        max_tokens: 6,
        temperature: 0,
        ignore_eos: true,
        stream: true,
      }),
    });
    expect([r.status, r.headers.get('content-type')]).to.deep.equal([200, 'text/event-stream; charset=utf-8']);
    const events = (await r.text()).split('\n\n').filter((e) => e !== '');
    expect(events.length).to.equal(7);
    expect(events[6]).to.equal('data: [DONE]');
    const chunks = events
      .slice(0, 6)
      .map(
        (e) => JSON.parse(e.slice('data: '.length)) as { choices: { text: string; finish_reason: string | null }[] },
      );
    expect(chunks.map((c) => c.choices[0].text)).to.deep.equal(['^', '[', 'z', '%', '[', 'z']);
    expect(chunks.map((c) => c.choices[0].finish_reason)).to.deep.equal([null, null, null, null, null, 'length']);
  });

  it("should answer the Open Inference Protocol's infer through the fronts as /predictions answers the same input, gzip bodies too", async () => {
    const counted = sample(await scrape(), infer);
    const input = mlpInput(4);
    const expected = (await post(`${server.inference}/predictions/mlp`, input)).json as number[];
    const request = JSON.stringify({ inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', data: input }] });
    // Four requests: separate connections, spread over both fronts.
    const answers = await Promise.all(
      [false, true, false, true].map(async (gzip) => {
        const r = await fetch(`${server.inference}/v2/models/mlp/infer`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
          body: gzip ? zlib.gzipSync(request) : request,
        });
        return [r.status, ((await r.json()) as { outputs: { data: number[] }[] }).outputs[0]!.data];
      }),
    );
    expect(answers).to.deep.equal(Array.from({ length: 4 }, () => [200, expected]));
    // Each counts once, as the fronts ship it (every 100 ms): the next test reads settled counts.
    await until(async () => sample(await scrape(), infer) === counted + 5, { message: 'the five requests counted' });
  });

  it('should serve a model through the fronts as soon as its registration is answered, and forget it as soon as its unregistration is (regression: 404, then served, for up to 500 ms)', async () => {
    const manage = async (method: string, q: string): Promise<number> =>
      (await fetch(`${server.management}/models${q}`, { method })).status;
    const predict = async (n: number): Promise<number[]> =>
      Promise.all(
        Array.from(
          { length: n },
          async (_, i) => (await post(`${server.inference}/predictions/mlp-late`, mlpInput(i))).status,
        ),
      );
    expect(await manage('POST', '?url=mlp&model_name=mlp-late&initial_workers=1&synchronous=true')).to.equal(200);
    expect(await predict(4)).to.deep.equal([200, 200, 200, 200]);
    expect(await manage('PUT', '/mlp-late?min_worker=0&synchronous=true')).to.equal(200);
    const r = await post(`${server.inference}/predictions/mlp-late`, mlpInput(0));
    expect([r.status, r.json]).to.deep.equal([
      503,
      {
        code: 503,
        type: 'ServiceUnavailableException',
        message:
          'Model "mlp-late" has no worker to serve inference request. Please use scale workers API to add workers.',
      },
    ]);
    expect(await manage('DELETE', '/mlp-late')).to.equal(200);
    expect(await predict(4)).to.deep.equal([404, 404, 404, 404]);
  });

  it('should answer /ping through the fronts from the worker states as soon as the primary has them (regression: Healthy for up to 500 ms after a worker died)', async () => {
    const workers = async (): Promise<{ pid: number; status: string }[]> =>
      (
        (await (await fetch(`${server.management}/models/mlp`)).json()) as {
          workers: { pid: number; status: string }[];
        }[]
      )[0]!.workers;
    const ping = async (): Promise<unknown> => (await fetch(`${server.inference}/ping`)).json();
    const [w] = await workers();
    process.kill(w!.pid, 'SIGKILL');
    await until(async () => (await workers()).every((x) => x.status !== 'READY'), {
      message: 'the primary saw the worker die',
    });
    expect(await ping()).to.deep.equal({ status: 'Partial Healthy' });
    await until(async () => (await workers()).some((x) => x.status === 'READY'), { message: 'its replacement ready' });
    expect(await ping()).to.deep.equal({ status: 'Healthy' });
  });

  it('should replace a killed front and keep the counts', async () => {
    const t0 = await scrape();
    const fronts = [...t0.matchAll(/^process_cpu_user_seconds_total\{pid="(\d+)"\} /gm)]
      .map((m) => Number(m[1]))
      .filter((p) => p !== server.proc.pid);
    process.kill(fronts[0], 'SIGKILL');
    await until(
      async () => {
        const pids = [...(await scrape()).matchAll(/^process_cpu_user_seconds_total\{pid="(\d+)"\} /gm)].map((m) =>
          Number(m[1]),
        );
        return pids.length === 3 && !pids.includes(fronts[0]);
      },
      { message: 'a new front in place of the killed one' },
    );
    const t1 = await scrape();
    expect(sample(t1, infer)).to.equal(sample(t0, infer));
    for (let i = 0; i < 10; i++)
      expect((await post(`${server.inference}/predictions/mlp`, mlpInput(i))).status).to.equal(200);
    await until(async () => sample(await scrape(), infer) === sample(t0, infer) + 10, {
      message: '10 more requests counted',
    });
    expect(server.output()).to.match(/front process \d+ exited \(SIGKILL\); starting another \(restart 1\)/);
    expect([
      sample(t0, 'tsserve_front_restarts_total{Hostname="' + host + '"}'),
      sample(await scrape(), 'tsserve_front_restarts_total{Hostname="' + host + '"}'),
    ]).to.deep.equal([0, 1]);
  });

  it('should end every request when a front is killed under load, none left hanging in the primary', async () => {
    const body = JSON.stringify(mlpInput(1));
    // A fresh connection per request: the moment a front dies, some are on their way to it.
    const one = (): Promise<string> => freshPost(server.inference, body);
    const outcomes: Record<string, number> = {};
    let stop = false;
    const loops = Array.from({ length: 32 }, async () => {
      while (!stop) {
        const r = await one();
        outcomes[r] = (outcomes[r] ?? 0) + 1;
      }
    });
    await until(() => (outcomes['200'] ?? 0) >= 300, { message: 'load running' });
    const fronts = [...(await scrape()).matchAll(/^process_cpu_user_seconds_total\{pid="(\d+)"\} /gm)]
      .map((m) => Number(m[1]))
      .filter((p) => p !== server.proc.pid);
    process.kill(fronts[0]!, 'SIGKILL');
    const at = outcomes['200'] ?? 0;
    await until(() => (outcomes['200'] ?? 0) >= at + 1000, { message: '1000 more answered after the kill' });
    stop = true;
    await Promise.all(loops);
    // Answered, or cut with the front that held them; never waiting on a connection nobody serves.
    expect(
      Object.keys(outcomes).filter((k) => k !== '200' && k !== 'ECONNRESET' && k !== 'EPIPE'),
      JSON.stringify(outcomes),
    ).to.deep.equal([]);
  });

  it('should finish admitted requests on SIGTERM and exit 0', async () => {
    const body = JSON.stringify(mlpInput(5));
    const inflight = Array.from({ length: 32 }, () =>
      fetch(`${server.inference}/predictions/mlp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }).then(
        async (r) => {
          await r.arrayBuffer();
          return r.status;
        },
        () => -1,
      ),
    );
    const code = await server.stop('SIGTERM');
    const statuses = await Promise.all(inflight);
    expect(code).to.equal(0);
    // Each answered request was admitted (200) or refused by the drain (503); one that connected
    // after the fronts closed their listener (-1: refused connection) got no answer at all.
    expect(statuses.filter((s) => s !== 200 && s !== 503 && s !== -1)).to.deep.equal([]);
    expect(server.output()).to.include('Model server stopped.');
  });
});
