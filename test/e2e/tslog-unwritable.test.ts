/**
 * The real server with tslog + prometheus whose `ts_metrics.log` is a directory: every open of
 * it fails (EISDIR), yet predictions keep being answered, model_metrics.log is written, and the
 * lost lines are counted in tsserve_sink_errors_total{sink="tslog"}.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { configArgs } from './config-args.js';
import { generateStore, mlpInput, post, sample, scrape, startTsserve, tempDir } from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';

const H = os.hostname();
const N = 6;

describe('tsserve start with an unwritable ts_metrics.log', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let logDir: string;

  before(async () => {
    logDir = tempDir('unwritable');
    fs.mkdirSync(path.join(logDir, 'ts_metrics.log'));
    server = await startTsserve({
      store: generateStore(['mlp']),
      logDir,
      args: [...configArgs(), '--metrics-mode', 'tslog,prometheus', '--disable-system-metrics'],
    });
  });

  after(() => {
    server?.kill();
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  it('should keep answering predictions and count at least two lost lines per prediction', async () => {
    const answers = [];
    for (let i = 0; i < N; i++) answers.push(await post(`${server.inference}/predictions/mlp`, mlpInput(i)));
    expect(answers.map((r) => r.status)).to.deep.equal(Array(N).fill(200));
    // Each prediction records at least Requests2XX and ts_inference_requests_total, both
    // ts_metrics lines, and each of those lines is lost: at least 2N once they are flushed.
    const series = `tsserve_sink_errors_total{sink="tslog",Hostname="${H}"}`;
    const lost = await until(
      async () => {
        const v = sample(await scrape(server, '?name[]=tsserve_sink_errors_total'), series);
        return v !== null && v >= 2 * N ? v : null;
      },
      { message: 'lost tslog lines counted' },
    );
    expect(lost).to.be.at.least(2 * N);
    expect(
      sample(
        await scrape(server, '?name[]=ts_inference_requests_total'),
        `ts_inference_requests_total{model_name="mlp",model_version="default",hostname="${H}"}`,
      ),
    ).to.equal(N);
    expect(server.output()).to.contain(
      `metrics log ${path.join(logDir, 'ts_metrics.log')}: Error: EISDIR: illegal operation on a directory`,
    );
    expect(fs.statSync(path.join(logDir, 'ts_metrics.log')).isDirectory()).to.equal(true);
    const model = await until(
      () => {
        const p = path.join(logDir, 'model_metrics.log');
        return fs.existsSync(p) && fs.statSync(p).size > 0 ? fs.readFileSync(p, 'utf8') : null;
      },
      { message: 'model_metrics.log written' },
    );
    expect(model).to.match(/ - \w+\.\w+:\d/);
  });

  it('should still stop cleanly with exit code 0', async () => {
    expect(await server.stop('SIGTERM')).to.equal(0);
  });
});
