/**
 * Every sink at once (tslog, prometheus, statsd to the REAL statsd daemon) with the `custom`
 * model's user handler: frontend counts and the handler's own metrics arrive in each sink with
 * the values recorded.
 */
import { expect } from 'chai';
import * as os from 'os';
import * as path from 'path';
import type { TslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import { generateStore, mlpInput, post, ROOT, sample, scrape, startTsserve } from './harness.js';
import { tslogLines } from './sink-readers.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';
import { mgmtCommand, startStatsd } from './statsd-daemon.js';
import type { StatsdDaemon } from './statsd-daemon.js';

const H = os.hostname();
const N_MLP = 7;
const N_CUSTOM = 5;
/** The custom handler's SizeOfImage per request: 784 float32 in kB. */
const IMAGE_KB = (784 * 4) / 1024;

function tslog(server: Tsserve, file: string): TslogLine[] {
  return tslogLines(server.logDir, file);
}

describe('tsserve start (tslog + prometheus + statsd, custom handler)', function () {
  this.timeout(120_000);
  let statsd: StatsdDaemon;
  let server: Tsserve;
  const customIds: string[] = [];

  before(async () => {
    statsd = await startStatsd();
    server = await startTsserve({
      store: generateStore(['mlp', 'custom']),
      args: [
        '--metrics-config',
        path.join(ROOT, 'examples', 'custom-metrics', 'metrics.yaml'),
        '--metrics-mode',
        'tslog,prometheus,statsd',
        '--statsd-address',
        `127.0.0.1:${statsd.port}`,
        '--disable-system-metrics',
      ],
    });
    const mlp = await Promise.all(
      Array.from({ length: N_MLP }, (_v, i) => post(`${server.inference}/predictions/mlp`, mlpInput(i))),
    );
    const custom = await Promise.all(
      Array.from({ length: N_CUSTOM }, (_v, i) => post(`${server.inference}/predictions/custom`, mlpInput(i))),
    );
    expect([...mlp, ...custom].map((r) => r.status)).to.deep.equal(Array(N_MLP + N_CUSTOM).fill(200));
    for (const r of custom) customIds.push(r.requestId ?? '');
  });

  after(() => {
    server?.kill();
    statsd?.stop();
  });

  it('should send ts_inference_requests_total counts to the statsd daemon that sum to the requests, aggregated per flush interval', async () => {
    const sum = (model: string): number =>
      statsd.lines
        .filter((l) => l.startsWith('ts_inference_requests_total:') && l.includes(`model_name:${model},`))
        .reduce((s, l) => s + Number(/^ts_inference_requests_total:(\d+)\|c\|/.exec(l)?.[1] ?? NaN), 0);
    await until(() => (sum('mlp') === N_MLP && sum('custom') === N_CUSTOM ? true : null), {
      message: 'statsd lines',
      observe: () => [sum('mlp'), sum('custom')],
    });
    const mlp = statsd.lines.filter(
      (l) => l.startsWith('ts_inference_requests_total:') && l.includes('model_name:mlp,'),
    );
    // Counters are summed in the client for one flush interval (100 ms): fewer lines than requests, each exact.
    expect(mlp.length).to.be.within(1, N_MLP);
    for (const l of mlp)
      expect(l).to.match(
        new RegExp(`^ts_inference_requests_total:[1-9]\\d*\\|c\\|#model_name:mlp,model_version:default,hostname:${H}$`),
      );
    expect(await mgmtCommand(statsd.mgmtPort, 'counters')).to.contain(
      `'ts_inference_requests_total;model_name=mlp;model_version=default;hostname=${H}': ${N_MLP}`,
    );
  });

  it("should show the custom handler's counter with the value it recorded in prometheus, tslog and statsd", async () => {
    const text = await until(
      async () => {
        const t = await scrape(server);
        return sample(t, `InferenceRequestCount{Hostname="${H}"}`) === N_CUSTOM ? t : null;
      },
      { message: 'InferenceRequestCount on /metrics' },
    );
    expect(sample(text, `InferenceRequestCount{Hostname="${H}"}`)).to.equal(N_CUSTOM);
    const lines = await until(
      () => {
        const ls = tslog(server, 'model_metrics.log').filter((l) => l.name === 'InferenceRequestCount');
        return ls.reduce((s, l) => s + l.value, 0) === N_CUSTOM ? ls : null;
      },
      { message: 'InferenceRequestCount in model_metrics.log' },
    );
    expect(lines.map((l) => [l.hostname, l.dimensions])).to.deep.equal(Array(lines.length).fill([H, []]));
    const sent = await until(
      () => {
        const ls = statsd.lines.filter((l) => l.startsWith('InferenceRequestCount:'));
        return ls.reduce((s, l) => s + Number(/^InferenceRequestCount:([^|]+)\|c/.exec(l)?.[1] ?? NaN), 0) === N_CUSTOM
          ? ls
          : null;
      },
      { message: 'InferenceRequestCount at the statsd daemon' },
    );
    // tslog has a line per record; StatsD a line per flush interval with the interval's sum.
    expect(sent.length).to.be.within(1, lines.length);
  });

  // Only tslog carries request ids (TorchServe's requestID field); Prometheus and StatsD carry the value.
  it("should record the custom handler's per-request SizeOfImage with each request's id in tslog and its value in prometheus and statsd", async () => {
    const lines = await until(
      () => {
        const ls = tslog(server, 'model_metrics.log').filter((l) => l.name === 'SizeOfImage');
        return ls.length === N_CUSTOM ? ls : null;
      },
      { message: 'SizeOfImage lines' },
    );
    expect(lines.map((l) => l.value)).to.deep.equal(Array(N_CUSTOM).fill(IMAGE_KB));
    expect(lines.map((l) => l.requestId).sort()).to.deep.equal([...customIds].sort());
    const text = await scrape(server, '?name[]=SizeOfImage');
    expect(text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))).to.deep.equal([
      `SizeOfImage{ModelName="custom",Level="Model",Hostname="${H}"} ${IMAGE_KB}`,
    ]);
    const sent = await until(
      () => {
        const ls = statsd.lines.filter((l) => l.startsWith('SizeOfImage:'));
        return ls.length > 0 ? ls : null;
      },
      { message: 'SizeOfImage at the statsd daemon' },
    );
    // A gauge goes out once per flush interval with its last level.
    expect(sent).to.deep.equal(
      Array(sent.length).fill(`SizeOfImage:${IMAGE_KB}|g|#ModelName:custom,Level:Model,Hostname:${H}`),
    );
    expect(await mgmtCommand(statsd.mgmtPort, 'gauges')).to.contain(
      `'SizeOfImage;ModelName=custom;Level=Model;Hostname=${H}': ${IMAGE_KB}`,
    );
  });
});
