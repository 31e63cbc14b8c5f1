/**
 * Overload against the real server: a full queue answers 503 and a request past its
 * responseTimeout answers 504, with TorchServe's JSON errors and exact counts. The models are
 * slow user handlers (test/e2e/harness.ts `slowModelStore`) sleeping per batch for what the
 * request body asks, so the states are reached by waiting on the server, not on a clock.
 */
import { expect } from 'chai';
import * as os from 'os';
import { call, post, sample, scrape, slowModelStore, startTsserve } from './harness.js';
import { until } from '../support/until.js';
import type { Tsserve } from './harness.js';
import { configArgs } from './config-args.js';

const H = os.hostname();

interface QueueStatus {
  remainingCapacity: number;
  pendingRequests: number;
}

describe('tsserve start: queue full 503 and response timeout 504 (real server, slow handler)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  const count = (text: string, series: string): number => sample(text, series) ?? 0;
  const admitted = (model: string): string =>
    `ts_inference_requests_total{model_name="${model}",model_version="default",hostname="${H}"}`;
  const R2 = `Requests2XX{Level="Host",Hostname="${H}"}`;
  const R5 = `Requests5XX{Level="Host",Hostname="${H}"}`;

  before(async () => {
    const store = slowModelStore({ slow: { responseTimeout: 60 }, 'slow-timeout': { responseTimeout: 1 } });
    server = await startTsserve({
      store,
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics', '--job-queue-size', '1'],
    });
  });
  after(() => server?.kill());

  it('should answer 503 (job queue full) once one batch runs, one is sent ahead and --job-queue-size 1 request waits', async () => {
    const before = await scrape(server);
    const SLEEP = 3000;
    const held = [0, 1, 2].map(() => post(`${server.inference}/predictions/slow`, { sleepMs: SLEEP }));
    let polls = 0;
    await until(
      async () => {
        polls++;
        const d = (await call('GET', `${server.management}/models/slow`)).json as Array<{
          jobQueueStatus: QueueStatus;
        }>;
        return d[0].jobQueueStatus.remainingCapacity === 0 ? d[0].jobQueueStatus : null;
      },
      { message: 'the queue of slow to fill' },
    );
    const full = await post(`${server.inference}/predictions/slow`, { sleepMs: 0 });
    expect(full.status).to.equal(503);
    expect(full.json).to.deep.equal({
      code: 503,
      type: 'ServiceUnavailableException',
      message:
        'Model "slow" has no worker to serve inference request. Please use scale workers API to add workers. (job queue full)',
    });
    const answers = await Promise.all(held);
    expect(answers.map((a) => [a.status, a.json])).to.deep.equal(Array(3).fill([200, { slept: SLEEP }]));
    const after = await scrape(server);
    expect(count(after, admitted('slow')) - count(before, admitted('slow'))).to.equal(3);
    // The 3 answers, plus every GET /models/slow poll on the management port.
    expect(count(after, R2) - count(before, R2)).to.equal(3 + polls);
    expect(count(after, R5) - count(before, R5)).to.equal(1);
    // The refusal is also counted by its reason, per model (0 from the start).
    const refused = `tsserve_requests_refused_total{model_name="slow",reason="queue_full",Hostname="${H}"}`;
    expect([sample(before, refused), sample(after, refused)]).to.deep.equal([0, 1]);
  });

  it("should describe a user-handler model in the Open Inference Protocol as the handler's, not onnxruntime's", async () => {
    const meta = await call('GET', `${server.inference}/v2/models/slow`);
    expect(meta).to.deep.equal({
      status: 200,
      json: { name: 'slow', versions: ['1.0'], platform: 'tsserve_handler', inputs: [], outputs: [] },
    });
  });

  it('should answer 504 when the handler takes longer than responseTimeout (1 s), and ignore the late answer', async () => {
    const before = await scrape(server);
    const late = await post(`${server.inference}/predictions/slow-timeout`, { sleepMs: 3000 });
    expect(late.status).to.equal(504);
    expect(late.json).to.deep.equal({
      code: 504,
      type: 'RequestTimeoutException',
      message: 'no response within responseTimeout 1 s',
    });
    // The worker's answer arrives later and is dropped; once it is back, the next request is served.
    let polls = 0;
    await until(
      async () => {
        polls++;
        const d = (await call('GET', `${server.management}/models/slow-timeout`)).json as Array<{
          workers: Array<{ status: string }>;
        }>;
        return d[0].workers.map((w) => w.status).join() === 'READY' ? true : null;
      },
      { message: 'the worker of slow-timeout to finish the late batch' },
    );
    const next = await post(`${server.inference}/predictions/slow-timeout`, { sleepMs: 0 });
    expect([next.status, next.json]).to.deep.equal([200, { slept: 0 }]);
    const after = await scrape(server);
    expect(count(after, admitted('slow-timeout')) - count(before, admitted('slow-timeout'))).to.equal(2);
    expect(count(after, R5) - count(before, R5)).to.equal(1);
    expect(count(after, R2) - count(before, R2)).to.equal(1 + polls);
  });
});
