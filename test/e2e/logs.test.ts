/**
 * The server's logs against the real server: ts_log.log records (frontend and worker lines with
 * their `worker` and `model` bindings), access_log.log on all three listeners, `--log-level`.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';
import { call, post, startTsserve, tempDir } from './harness.js';

/** A handler that prints to stdout and stderr, and throws when a request asks it to. */
const LOGGING_HANDLER = `'use strict';
exports.handle = async function handle(requests) {
  if (requests.some((r) => r.body !== null && typeof r.body === 'object' && r.body.fail === true)) throw new Error('asked to fail');
  console.log('handled ' + requests.length);
  console.error('a line on stderr');
  return requests.map(() => ({ ok: true }));
};
`;

function loggingStore(): string {
  const store = path.join(tempDir('log-store'), 'store');
  const dir = path.join(store, 'talker');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'handler.js'), LOGGING_HANDLER);
  fs.writeFileSync(
    path.join(dir, 'model-config.yaml'),
    'handler: handler.js\nbatchSize: 1\nmaxBatchDelay: 0\nminWorkers: 1\nmaxWorkers: 1\nresponseTimeout: 60\n',
  );
  return store;
}

type Rec = Record<string, unknown>;

function records(server: Tsserve, file: string): Rec[] {
  const p = path.join(server.logDir, file);
  if (!fs.existsSync(p)) return [];
  return fs
    .readFileSync(p, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Rec);
}

/** A record without its time (and, for access lines, its duration), after checking their types. */
function stable(r: Rec): Rec {
  const { time, durationMs, pid, hostname, ...rest } = r;
  expect(typeof time).to.equal('string');
  if (durationMs !== undefined) expect(durationMs).to.be.a('number').and.at.least(0);
  if (pid !== undefined) expect([typeof pid, typeof hostname]).to.deep.equal(['number', 'string']);
  return rest;
}

describe('Server logs (real tsserve start)', function () {
  this.timeout(120_000);
  let store: string;
  before(() => {
    store = loggingStore();
  });
  after(() => fs.rmSync(path.dirname(store), { recursive: true, force: true }));

  describe('at the default level', () => {
    let server: Tsserve;
    before(async () => {
      server = await startTsserve({ store });
    });
    after(() => server.kill());

    it('should write one access record per request on each of the three ports', async () => {
      const port = (url: string): number => Number(new URL(url).port);
      const ping = await fetch(`${server.inference}/ping`);
      const pingBody = await ping.text();
      const models = await fetch(`${server.management}/models`);
      const modelsBody = await models.text();
      const scrape = await fetch(`${server.metrics}/metrics`);
      const scrapeBody = await scrape.text();
      const pred = await post(`${server.inference}/predictions/talker`, { x: 1 });
      expect(pred.status).to.equal(200);
      const lines = await until(
        () => {
          const r = records(server, 'access_log.log');
          return r.length >= 4 ? r : null;
        },
        { message: 'four access records' },
      );
      const [a, b, c, d] = lines.map(stable);
      expect(
        typeof a!.requestId === 'string' && typeof b!.requestId === 'string' && typeof c!.requestId === 'string',
      ).to.equal(true);
      expect(
        [a, b, c, d].map((r) => ({
          ...r,
          requestId: r!.listener === 'inference' && r!.path !== '/ping' ? r!.requestId : '(fresh)',
        })),
      ).to.deep.equal([
        {
          listener: 'inference',
          port: port(server.inference),
          method: 'GET',
          path: '/ping',
          status: 200,
          bytes: Buffer.byteLength(pingBody),
          requestId: '(fresh)',
        },
        {
          listener: 'management',
          port: port(server.management),
          method: 'GET',
          path: '/models',
          status: 200,
          bytes: Buffer.byteLength(modelsBody),
          requestId: '(fresh)',
        },
        {
          listener: 'metrics',
          port: port(server.metrics),
          method: 'GET',
          path: '/metrics',
          status: 200,
          bytes: Buffer.byteLength(scrapeBody),
          requestId: '(fresh)',
        },
        {
          listener: 'inference',
          port: port(server.inference),
          method: 'POST',
          path: '/predictions/talker',
          status: 200,
          bytes: Buffer.byteLength('{"ok":true}'),
          requestId: pred.requestId,
        },
      ]);
    });

    it("should log the worker's stdout, stderr and IPC lines with worker and model bindings", async () => {
      expect((await post(`${server.inference}/predictions/talker`, { fail: true })).status).to.equal(500);
      const worker = await until(
        () => {
          const r = records(server, 'ts_log.log').find((x) => x.msg === 'handled 1');
          return r === undefined ? null : (r.worker as string);
        },
        { message: "the handler's stdout line in ts_log.log" },
      );
      expect(worker).to.match(/^W-\d+-talker_1\.0$/);
      const failed = await until(
        () =>
          records(server, 'ts_log.log').find((x) => typeof x.msg === 'string' && x.msg.startsWith('batch ')) ?? null,
        { message: 'the failed batch line' },
      );
      const byWorker = records(server, 'ts_log.log')
        .filter((x) => x.worker === worker)
        .map(stable);
      expect(byWorker.find((x) => x.msg === 'handled 1')).to.deep.equal({
        level: 'info',
        worker,
        model: 'talker',
        stream: 'stdout',
        msg: 'handled 1',
      });
      expect(byWorker.find((x) => x.msg === 'a line on stderr')).to.deep.equal({
        level: 'warn',
        worker,
        model: 'talker',
        stream: 'stderr',
        msg: 'a line on stderr',
      });
      const f = stable(failed);
      expect([f.level, f.worker, f.model, f.stream, (f.msg as string).split('\n')[0]]).to.deep.equal([
        'error',
        worker,
        'talker',
        undefined,
        'batch 2 failed: Error: asked to fail',
      ]);
    });

    it('should end ts_log.log with the drain and stop lines, flushed before exit', async () => {
      expect(await server.stop('SIGTERM')).to.equal(0);
      const msgs = records(server, 'ts_log.log').map((r) => r.msg);
      expect(msgs.slice(-2)).to.deep.equal([
        'SIGTERM: draining (finishing in-flight requests, stopping workers)',
        'Model server stopped.',
      ]);
      expect(msgs.includes('Model server started.')).to.equal(true);
    });
  });

  describe('with --log-level warn', () => {
    let server: Tsserve;
    before(async () => {
      server = await startTsserve({ store, args: ['--log-level', 'warn'], ready: 'ping' });
    });
    after(() => server.kill());

    it('should write warn and above only, to ts_log.log and the console', async () => {
      expect((await call('GET', `${server.management}/models`)).status).to.equal(200);
      expect((await post(`${server.inference}/predictions/talker`, { fail: true })).status).to.equal(500);
      await until(() => (records(server, 'ts_log.log').some((x) => x.level === 'error') ? true : null), {
        message: 'the error record',
      });
      expect(await server.stop('SIGTERM')).to.equal(0);
      const levels = new Set(records(server, 'ts_log.log').map((r) => r.level));
      expect([...levels].filter((l) => l !== 'warn' && l !== 'error')).to.deep.equal([]);
      expect(server.output()).to.not.contain('"level":"info"');
      expect(records(server, 'access_log.log').length).to.be.at.least(2); // the access log is not subject to --log-level
    });
  });
});
