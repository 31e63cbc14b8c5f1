/**
 * Several instances on one host, for real: three tsserve instances (own ports, own log dirs)
 * behind the real HAProxy running deploy/haproxy/haproxy.cfg, one real Prometheus over all three
 * through file-based discovery (deploy/haproxy/prometheus.yml), and StatsD pushes from all three
 * into one real `statsd` daemon. Every sink must count exactly the requests the clients got
 * answers for, also when one instance is stopped (SIGTERM, its drain) in the middle of the load.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { parseTslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import { generateStore, haveBinary, mlpInput, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';
import { haproxyBinary, startHaproxy } from './haproxy.js';
import type { Haproxy } from './haproxy.js';
import { MAY_BE_EMPTY, repoDashboards, runDashboard } from './dashboard-queries.js';
import { startPrometheusSd } from './prometheus-sd.js';
import type { PrometheusSd } from './prometheus-sd.js';
import { mgmtCommand, startStatsd } from './statsd-daemon.js';
import type { StatsdDaemon } from './statsd-daemon.js';
import { until } from '../support/until.js';

/** Requests of the first phase (three instances up): a multiple of 3, so roundrobin splits it evenly. */
const N = 150;
/** Requests of the second phase; instance 2 gets SIGTERM after KILL_AFTER of them have answered. */
const M = 150;
const KILL_AFTER = 50;
/** Requests in flight at once through the balancer. */
const CONCURRENCY = 6;

/** `ts_inference_requests_total` in one instance's ts_metrics.log: the sum of the lines' increments. */
function tslogTotal(logDir: string): number {
  const file = path.join(logDir, 'ts_metrics.log');
  if (!fs.existsSync(file)) return 0;
  let total = 0;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const l = parseTslogLine(line);
    if (l !== null && l.name === 'ts_inference_requests_total') total += l.value;
  }
  return total;
}

/** The sum of the `ts_inference_requests_total:V|c...` increments the daemon received. */
function statsdTotal(d: StatsdDaemon): number {
  return d.lines
    .filter((l) => l.startsWith('ts_inference_requests_total:'))
    .reduce((s, l) => s + Number(l.slice(l.indexOf(':') + 1, l.indexOf('|'))), 0);
}

/** The daemon's own counters (management port `counters`), summed over the keys of `name`. */
async function statsdCounter(port: number, name: string): Promise<number> {
  const text = await mgmtCommand(port, 'counters');
  let total = 0;
  for (const m of text.matchAll(/'([^']+)': (\d+)/g)) if (m[1]!.startsWith(name)) total += Number(m[2]);
  return total;
}

/** Sends `count` mlp predictions through `url`, CONCURRENCY at a time; `onAnswer` sees each status as it arrives. */
async function drive(
  url: string,
  count: number,
  onAnswer: (status: number, answered: number) => void = () => {},
): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {};
  let next = 0;
  let answered = 0;
  const body = JSON.stringify(mlpInput(7));
  const lane = async (): Promise<void> => {
    while (next < count) {
      next++;
      let status: number;
      try {
        const res = await fetch(`${url}/predictions/mlp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        await res.arrayBuffer();
        status = res.status;
      } catch {
        status = 0; /* connection error: no answer */
      }
      statuses[status] = (statuses[status] ?? 0) + 1;
      onAnswer(status, ++answered);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return statuses;
}

/** `HOST:PORT` of an `http://HOST:PORT` address. */
const hostPort = (url: string): string => url.replace('http://', '');

describe('tsserve instances behind HAProxy, one Prometheus (file_sd) and one StatsD daemon', function () {
  this.timeout(180_000);
  let statsd: StatsdDaemon | undefined;
  let lb: Haproxy | undefined;
  let prom: PrometheusSd | undefined;
  const servers: Tsserve[] = [];

  before(async function () {
    const bin = haproxyBinary();
    if (bin === null) {
      console.warn('SKIPPED: haproxy not found — install the Debian package `haproxy` (apt-get install -y haproxy)');
      this.skip();
    }
    if (!haveBinary('prometheus')) {
      console.warn(
        'SKIPPED: prometheus not found — install the Debian package `prometheus` (apt-get install -y prometheus)',
      );
      this.skip();
    }
    statsd = await startStatsd();
    const store = generateStore(['mlp']);
    // System metrics every second, so the dashboard's system panels have data too.
    const args = [
      '--metrics-mode',
      'tslog,prometheus,statsd',
      '--statsd-address',
      `127.0.0.1:${statsd.port}`,
      '--metric-time-interval',
      '1',
    ];
    // Every start settles before a failure is thrown, so after() kills the ones that did start.
    const started = await Promise.allSettled([0, 1, 2].map(() => startTsserve({ store, args })));
    for (const r of started) if (r.status === 'fulfilled') servers.push(r.value);
    for (const r of started) if (r.status === 'rejected') throw r.reason;
    prom = await startPrometheusSd(servers.map((s) => hostPort(s.metrics)));
    lb = await startHaproxy(bin!, [
      hostPort(servers[0]!.inference),
      hostPort(servers[1]!.inference),
      hostPort(servers[2]!.inference),
    ]);
  });

  after(() => {
    lb?.stop();
    prom?.stop();
    for (const s of servers) s.kill();
    statsd?.stop();
  });

  it('should count exactly N requests through the balancer in Prometheus, in StatsD and in the three tslog files, a third per instance', async () => {
    const statuses = await drive(lb!.url, N);
    expect(statuses).to.deep.equal({ 200: N });

    // The tslog files: each instance wrote its own third.
    const perFile = await until(
      () => {
        const t = servers.map((s) => tslogTotal(s.logDir));
        return t.reduce((a, b) => a + b, 0) === N ? t : null;
      },
      {
        message: `${N} ts_inference_requests_total in the three ts_metrics.log`,
        observe: () => servers.map((s) => tslogTotal(s.logDir)),
      },
    );
    expect(perFile).to.deep.equal([N / 3, N / 3, N / 3]);

    // StatsD: the lines received, and the daemon's own counter.
    await until(() => statsdTotal(statsd!) === N, {
      message: `${N} at the statsd daemon`,
      observe: () => statsdTotal(statsd!),
    });
    expect(await statsdCounter(statsd!.mgmtPort, 'ts_inference_requests_total')).to.equal(N);

    // Prometheus over the three targets it discovered from the file.
    const sum = await until(
      async () => {
        const r = await prom!.query('sum(ts_inference_requests_total)');
        return r.length === 1 && Number(r[0]!.value) === N ? r : null;
      },
      {
        message: `Prometheus sum(ts_inference_requests_total) == ${N}`,
        timeoutMs: 30_000,
        observe: () => prom!.query('sum(ts_inference_requests_total)'),
      },
    );
    expect(sum.map((s) => s.value)).to.deep.equal([String(N)]);
    const byInstance = await prom!.query('sum by (instance) (ts_inference_requests_total)');
    const want = Object.fromEntries(servers.map((s, i) => [hostPort(s.metrics), String(perFile[i])]));
    expect(Object.fromEntries(byInstance.map((s) => [s.metric.instance, s.value]))).to.deep.equal(want);

    // The shipped config's rule_files loaded every generated rule (45: recording and alerting).
    const rules = (await (await fetch(`${prom!.url}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { health: string }[] }[] };
    };
    const loaded = rules.data.groups.flatMap((g) => g.rules);
    expect({ rules: loaded.length, unhealthy: loaded.filter((r) => r.health === 'err').length }).to.deep.equal({
      rules: 45,
      unhealthy: 0,
    });
  });

  it('should lose no admitted request when one instance is stopped mid-load: clients answered = tslog = StatsD, and Prometheus still answers', async () => {
    const before = { tslog: servers.map((s) => tslogTotal(s.logDir)), statsd: statsdTotal(statsd!) };
    const victim = servers[1]!;
    let exit: Promise<number | null> | undefined;
    const statuses = await drive(lb!.url, M, (_status, answered) => {
      if (answered === KILL_AFTER) exit = victim.stop('SIGTERM');
    });
    expect(await exit).to.equal(0);
    // The stop really fell mid-load: HAProxy had to send requests meant for ts2 elsewhere.
    const moved = await lb!.stat('ts2');
    expect(moved.wretr + moved.wredis).to.be.greaterThan(0);
    // HAProxy sent the drain's 503s and the refused connections again, to the other two.
    expect(statuses).to.deep.equal({ 200: M });
    const servedOk = statuses[200] ?? 0;

    // Push sinks: the leaving instance flushed its last increments before it exited.
    const after = await until(
      () => {
        const t = servers.map((s) => tslogTotal(s.logDir));
        return t.reduce((a, b) => a + b, 0) - before.tslog.reduce((a, b) => a + b, 0) === servedOk ? t : null;
      },
      { message: `${servedOk} more in the tslog files`, observe: () => servers.map((s) => tslogTotal(s.logDir)) },
    );
    await until(() => statsdTotal(statsd!) - before.statsd === servedOk, {
      message: `${servedOk} more at the statsd daemon`,
      observe: () => statsdTotal(statsd!),
    });
    expect(await statsdCounter(statsd!.mgmtPort, 'ts_inference_requests_total')).to.equal(N + servedOk);
    expect(after.reduce((a, b) => a + b, 0)).to.equal(N + M);
    expect(after[1]).to.be.greaterThan(before.tslog[1]!); // it served in this phase before it left

    // Prometheus: the stopped target is down, the two others are exact, and the queries answer.
    const survivors = [servers[0]!, servers[2]!];
    const survivorsTotal = after[0]! + after[2]!;
    await until(
      async () => {
        const up = await prom!.query(`up{instance="${hostPort(victim.metrics)}"}`);
        const sum = await prom!.query('sum(ts_inference_requests_total)');
        return up[0]?.value === '0' && Number(sum[0]?.value) === survivorsTotal;
      },
      {
        message: `the stopped target down and sum(ts_inference_requests_total) == ${survivorsTotal}`,
        timeoutMs: 30_000,
      },
    );
    const byInstance = await prom!.query('sum by (instance) (ts_inference_requests_total)');
    expect(Object.fromEntries(byInstance.map((s) => [s.metric.instance, s.value]))).to.deep.equal(
      Object.fromEntries(survivors.map((s) => [hostPort(s.metrics), String(tslogTotal(s.logDir))])),
    );
    // What Prometheus last scraped from the stopped instance: at most its tslog total (a pull
    // misses what the instance counted after its last scrape; the push sinks have it all).
    const last = await prom!.query(
      `sum(last_over_time(ts_inference_requests_total{instance="${hostPort(victim.metrics)}"}[10m]))`,
    );
    expect(Number(last[0]!.value)).to.be.at.most(after[1]!);
    // Every query of the generated serving dashboard still answers over the two survivors.
    const serving = repoDashboards().find((d) => d.file === 'tsserve-serving.json')!;
    const { answered, empty } = await runDashboard(prom!, serving, [
      ...MAY_BE_EMPTY,
      [/\bRequests4XX_total\b/, 'every request through the balancer succeeds'],
      [
        /\b(InferenceRequestCount|InitializeCallCount|PreprocessCallCount|PostprocessCallCount|RequestBatchSize|HandlerMethodTime|ExamplePercentMetric|SizeOfImage)(_total|_bucket|_sum|_count)?\b/,
        'model metrics only the custom demo handler records; these instances serve mlp',
      ],
      [
        /\b(ts_image_refused_total|ImageDecodeTime|ImagePixels|ts_embedding_\w+|EmbeddingBatchTokens)(_total|_bucket|_sum|_count)?\b/,
        'families of the image classifier and embedding models; these instances serve mlp',
      ],
    ]);
    expect(empty, 'serving dashboard queries with no data after the stop').to.deep.equal([]);
    expect(answered).to.be.greaterThan(0);
  });
});
