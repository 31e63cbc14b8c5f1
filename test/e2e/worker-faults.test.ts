/**
 * A worker whose answers cannot be used, against the real server: a handler that forges an
 * empty `tsserve.result` for each batch over the worker's own IPC channel (the channel is the
 * handler's too). Each request gets a 500 naming the worker, the worker's real result that
 * follows is dropped, both are counted in tsserve_worker_output_faults_total, and ts_log gets one
 * line per kind, not one per batch. A handler that merely returns the wrong number of answers is
 * the worker's to answer (a well-formed 500 per request), not an output fault.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { call, post, removeStores, sample, scrape, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

const FORGER = `process.on('message', (m) => {
  if (m !== null && typeof m === 'object' && m.type === 'tsserve.batch') process.send({ type: 'tsserve.result', batchId: m.batchId, responses: [], handlerMs: 1 });
});
export function handle(requests) { return requests.map((r) => ({ echo: r.body })); }
`;

describe('a worker answering with results that cannot be used (real tsserve start)', function () {
  this.timeout(120_000);
  let server: Tsserve;

  before(async () => {
    const store = path.join(tempDir('faults'), 'store');
    fs.mkdirSync(path.join(store, 'forger'), { recursive: true });
    fs.writeFileSync(path.join(store, 'forger', 'handler.mjs'), FORGER);
    fs.mkdirSync(path.join(store, 'miscount'), { recursive: true });
    fs.writeFileSync(path.join(store, 'miscount', 'handler.mjs'), 'export function handle() { return []; }\n');
    for (const m of ['forger', 'miscount'])
      fs.writeFileSync(
        path.join(store, m, 'model-config.yaml'),
        'handler: handler.mjs\nbatchSize: 1\nmaxBatchDelay: 0\nminWorkers: 1\nmaxWorkers: 1\n',
      );
    server = await startTsserve({ store, args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'] });
  });

  after(async () => {
    await server.stop('SIGTERM');
    removeStores();
  });

  it('should answer 500 naming the worker, count malformed_result and unknown_batch, and log each kind once', async () => {
    const models = await call('GET', `${server.management}/models/forger`);
    const worker = (models.json as Array<{ workers: Array<{ id: string }> }>)[0]!.workers[0]!.id;
    const answers = [
      await post(`${server.inference}/predictions/forger`, [1]),
      await post(`${server.inference}/predictions/forger`, [2]),
    ];
    const host = /Hostname="([^"]*)"/.exec(await scrape(server))![1]!;
    const series = (reason: string): string =>
      `tsserve_worker_output_faults_total{model_name="forger",reason="${reason}",Hostname="${host}"}`;
    // The worker's own results come after the forged ones have answered the requests.
    const text = await until(
      async () => {
        const t = await scrape(server);
        return sample(t, series('unknown_batch')) === 2 ? t : null;
      },
      { message: 'two unknown_batch faults', observe: () => null },
    );
    const errors = (): Array<Record<string, unknown>> =>
      fs
        .readFileSync(path.join(server.logDir, 'ts_log.log'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((r) => r.level === 'error' && r.model === 'forger');
    // ts_log is written asynchronously: wait for the second kind's line (a third would be a failure below).
    const logged = await until(
      () => {
        const e = errors();
        return e.length >= 2 ? e : null;
      },
      { message: 'two error records in ts_log.log', observe: errors },
    );
    const message = `worker ${worker} sent 0 responses for a batch of 1 requests; they cannot be matched to the requests`;
    expect({
      answers: answers.map((a) => [a.status, a.json]),
      counted: ['malformed_result', 'extra_response', 'unknown_batch', 'log_line_truncated'].map((r) =>
        sample(text, series(r)),
      ),
      logged: logged.map((r) => [r.worker, r.model, r.msg]),
    }).to.deep.equal({
      answers: [
        [500, { code: 500, type: 'InternalServerException', message }],
        [500, { code: 500, type: 'InternalServerException', message }],
      ],
      counted: [2, null, 2, null],
      logged: [
        [
          worker,
          'forger',
          `worker ${worker} sent a malformed result for batch 1: 0 responses for a batch of 1 requests (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="malformed_result"})`,
        ],
        [
          worker,
          'forger',
          `worker ${worker} sent a result for batch 1, which is not in flight at it; dropped (further ones are logged at most once a minute; all are counted in tsserve_worker_output_faults_total{reason="unknown_batch"})`,
        ],
      ],
    });
  });

  it('should leave a handler that returns the wrong number of answers to its worker: a well-formed 500 per request, no output fault', async () => {
    const answer = await post(`${server.inference}/predictions/miscount`, [1]);
    const text = await scrape(server);
    expect([
      answer.status,
      answer.json,
      text.split('\n').filter((l) => l.startsWith('tsserve_worker_output_faults_total{model_name="miscount"')),
    ]).to.deep.equal([
      500,
      {
        code: 500,
        type: 'InternalServerException',
        message: 'handler returned 0 answers for a batch of 1 (it must return one answer per request)',
      },
      [],
    ]);
  });
});
