import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { writeMlp } from '../../../tools/models/mlp.js';
import type {
  BatchTensors,
  LoadFailedMessage,
  LogMessage,
  ReadyMessage,
  ResultMessage,
} from '../../../schema/worker-protocol.js';
import { isTensorAnswer, valuesOf } from '../../../schema/tensors.js';
import { ForkedWorker, modelConfig, testMetricsConfig } from './forked-worker.js';

const ONES = (n: number): number[] => Array.from({ length: n }, (_, i) => (i % 7) / 7);

/** A batch's tensors as the frontend sends them: each row the mlp's `input` as float32, null for a JSON body. */
function tensorsOf(rows: readonly (readonly number[] | null)[]): BatchTensors {
  const parts = rows.filter((r) => r !== null).map((r) => new Uint8Array(Float32Array.from(r).buffer));
  const data = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  const offsets = new Uint32Array(parts.length + 1);
  parts.forEach((p, i) => {
    data.set(p, offsets[i]!);
    offsets[i + 1] = offsets[i]! + p.length;
  });
  return {
    kinds: [[{ name: 'input', dtype: 'float32' as const, dims: [784] }]],
    kindOf: Int32Array.from(rows, (r) => (r === null ? -1 : 0)),
    data,
    offsets,
  };
}

/** The built-in handler's answer to a request whose input came as a JSON body. */
const JSON_BODY =
  'the built-in onnx handler takes the inputs input as tensors the frontend decodes; this request has a JSON body';

describe('backend/worker/main (forked)', () => {
  let tmp: string;
  let realTmp: string;
  let mlpDir: string;
  const workers: ForkedWorker[] = [];

  const start = (): ForkedWorker => {
    const w = new ForkedWorker();
    workers.push(w);
    return w;
  };

  /** A model dir holding one handler file with `source`. */
  const handlerModel = (name: string, source: string): string => {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'handler.js'), source);
    return dir;
  };

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-worker-'));
    realTmp = fs.realpathSync(tmp);
    mlpDir = path.join(tmp, 'mlp');
    writeMlp(mlpDir, { hidden: 32, seed: 7 });
  });

  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.kill()));
  });

  after(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('should answer a batch of 3 with two probability vectors and one 400 for the bad input', async () => {
    const w = start();
    w.init(modelConfig('mlp', mlpDir, 'onnx'));
    const ready = await w.waitFor<ReadyMessage>((m) => (m as { type: string }).type !== 'tsserve.metrics');
    expect(ready.type).to.equal('tsserve.ready');
    expect(ready.workerId).to.equal('W-test-mlp');
    expect(ready.loadTimeMs).to.be.a('number').and.to.be.above(0); // measured around a real model load

    w.send({
      type: 'tsserve.batch',
      batchId: 1,
      requests: [
        { requestId: 'req-1', body: null },
        { requestId: 'req-2', body: [1, 2, 3] },
        { requestId: 'req-3', body: null },
      ],
      tensors: tensorsOf([ONES(784), null, ONES(784).reverse()]),
    });
    const result = await w.waitType<ResultMessage>('tsserve.result');
    expect(result.batchId).to.equal(1);
    expect(result.responses).to.have.length(3);
    expect(result.responses[1]).to.deep.equal({ ok: false, status: 400, message: JSON_BODY });
    for (const i of [0, 2]) {
      const r = result.responses[i]!;
      expect(r.ok).to.equal(true);
      const answer = (r as { body: unknown }).body;
      if (!isTensorAnswer(answer)) throw new Error('not a tensor answer');
      expect(answer.outputs).to.deep.equal([{ name: 'probabilities', dtype: 'float32', dims: [10] }]);
      const body = valuesOf('float32', answer.data[0]!) as number[];
      expect(body).to.have.length(10);
      for (const p of body) expect(p).to.be.within(0, 1);
      expect(body.reduce((a, b) => a + b, 0)).to.be.closeTo(1, 1e-5);
    }
    expect(result.responses[0]).to.not.deep.equal(result.responses[2]);

    // The result itself carries the batch's flush: HandlerTime and PredictionTime for its ids,
    // and no metrics message of its own follows it.
    expect(result.metrics?.type).to.equal('tsserve.metrics');
    const resultAt = w.messages.indexOf(result);
    expect(
      w.messages.slice(resultAt + 1).filter((m) => (m as { type: string }).type === 'tsserve.metrics'),
    ).to.deep.equal([]);
    const timing = w.points.filter((p) => p.metric === 'HandlerTime' || p.metric === 'PredictionTime');
    expect(timing.map((p) => [p.metric, p.dims, p.requestId])).to.deep.equal([
      ['HandlerTime', ['mlp', 'Model'], 'req-1,req-2,req-3'],
      ['PredictionTime', ['mlp', 'Model'], 'req-1,req-2,req-3'],
    ]);
    expect(timing[0]!.value).to.equal(result.handlerMs);
    expect(timing[1]!.value).to.be.within(0, timing[0]!.value);
  });

  it('should send no metrics message at all when the init message says metrics are off', async () => {
    const w = start();
    const dir = handlerModel(
      'quiet',
      "exports.handle = async (reqs, ctx) => { ctx.metrics.addCounter('Hits', 1); return reqs.map(() => 1); };\n",
    );
    w.send({
      type: 'tsserve.init',
      v: 1,
      workerId: 'W-test-quiet',
      workerIndex: 0,
      model: modelConfig('quiet', dir, 'handler.js'),
      metrics: testMetricsConfig(),
      metricsEnabled: false,
      autoLabels: { hostname: 'h' },
    });
    await w.waitType<ReadyMessage>('tsserve.ready');
    w.send({ type: 'tsserve.batch', batchId: 1, requests: [{ requestId: 'r1', body: 1 }] });
    const result = await w.waitType<ResultMessage>('tsserve.result');
    expect(result.responses).to.deep.equal([{ ok: true, body: 1 }]);
    expect(result.metrics).to.equal(undefined); // nor inside the result
    w.send({ type: 'tsserve.shutdown' });
    expect(await w.exited).to.equal(0);
    expect(w.messages.map((m) => (m as { type: string }).type)).to.deep.equal(['tsserve.ready', 'tsserve.result']);
  });

  it('should answer 400 to requests whose input is a JSON body (the frontend decodes every built-in onnx input) and run the rest of the batch', async () => {
    const w = start();
    w.init(modelConfig('mlp', mlpDir, 'onnx'));
    await w.waitType('tsserve.ready');
    const bad = ONES(784) as unknown[];
    bad[5] = 'x';
    w.send({
      type: 'tsserve.batch',
      batchId: 7,
      requests: [
        { requestId: 'a', body: bad },
        { requestId: 'b', body: null },
        { requestId: 'c', body: 'hello' },
      ],
      tensors: tensorsOf([null, ONES(784), null]),
    });
    const result = await w.waitType<ResultMessage>('tsserve.result');
    expect(result.responses[0]).to.deep.equal({ ok: false, status: 400, message: JSON_BODY });
    expect(result.responses[1]!.ok).to.equal(true);
    expect(result.responses[2]).to.deep.equal({ ok: false, status: 400, message: JSON_BODY });
  });

  it('should refuse a handler path that escapes the model dir with ..', async () => {
    const outside = path.join(tmp, 'outside');
    fs.mkdirSync(outside, { recursive: true });
    const marker = path.join(outside, 'ran');
    fs.writeFileSync(
      path.join(outside, 'evil.js'),
      `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x');\nexports.handle = (r) => r.map(() => 'pwned');\n`,
    );
    const dir = path.join(tmp, 'escape');
    fs.mkdirSync(dir);
    const w = start();
    w.init(modelConfig('escape', dir, '../outside/evil.js'));
    const failed = await w.waitType<LoadFailedMessage>('tsserve.load_failed');
    expect(failed).to.deep.equal({
      type: 'tsserve.load_failed',
      workerId: 'W-test-escape',
      error: `handler refused: "../outside/evil.js" resolves outside the model directory ${path.join(realTmp, 'escape')}`,
    });
    expect(fs.existsSync(marker)).to.equal(false);
  });

  it('should refuse a handler that is a symlink leaving the model dir', async () => {
    const outside = path.join(tmp, 'outside2');
    fs.mkdirSync(outside);
    const marker = path.join(outside, 'ran');
    fs.writeFileSync(path.join(outside, 'evil.js'), `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x');\n`);
    const dir = path.join(tmp, 'linked');
    fs.mkdirSync(dir);
    fs.symlinkSync(path.join(outside, 'evil.js'), path.join(dir, 'handler.js'));
    const w = start();
    w.init(modelConfig('linked', dir, 'handler.js'));
    const failed = await w.waitType<LoadFailedMessage>('tsserve.load_failed');
    expect(failed.error).to.equal(
      `handler refused: "handler.js" is a symlink to ${path.join(realTmp, 'outside2', 'evil.js')}, outside the model directory ${path.join(realTmp, 'linked')}`,
    );
    expect(fs.existsSync(marker)).to.equal(false);
  });

  it('should answer a per-request error with its status and the others with their bodies', async () => {
    const dir = handlerModel(
      'perreq',
      `
exports.handle = (requests, ctx) => requests.map((r) => r.body === 'bad' ? ctx.requestError('bad body: ' + r.requestId) : { echo: r.body, ids: ctx.requestIds });
`,
    );
    const w = start();
    w.init(modelConfig('perreq', dir, 'handler'));
    await w.waitType('tsserve.ready');
    w.send({
      type: 'tsserve.batch',
      batchId: 2,
      requests: [
        { requestId: 'x', body: 'ok' },
        { requestId: 'y', body: 'bad' },
      ],
    });
    const result = await w.waitType<ResultMessage>('tsserve.result');
    expect(result.responses).to.deep.equal([
      { ok: true, body: { echo: 'ok', ids: ['x', 'y'] } },
      { ok: false, status: 400, message: 'bad body: y' },
    ]);
  });

  it('should answer 500 to every request when the handler throws, and keep serving', async () => {
    const dir = handlerModel(
      'thrower',
      `
let n = 0;
exports.preprocess = (requests) => { if (n++ === 0) throw new Error('preprocess exploded'); return requests; };
exports.inference = (batch) => batch.map((r) => r.body * 2);
exports.postprocess = (out) => out;
`,
    );
    const w = start();
    w.init(modelConfig('thrower', dir, 'handler.js'));
    await w.waitType('tsserve.ready');
    w.send({
      type: 'tsserve.batch',
      batchId: 1,
      requests: [
        { requestId: 'a', body: 1 },
        { requestId: 'b', body: 2 },
      ],
    });
    const first = await w.waitType<ResultMessage>('tsserve.result');
    expect(first.responses).to.deep.equal([
      { ok: false, status: 500, message: 'preprocess exploded' },
      { ok: false, status: 500, message: 'preprocess exploded' },
    ]);
    w.send({ type: 'tsserve.batch', batchId: 2, requests: [{ requestId: 'c', body: 21 }] });
    const second = await w.waitFor<ResultMessage>(
      (m) => (m as ResultMessage).type === 'tsserve.result' && (m as ResultMessage).batchId === 2,
    );
    expect(second.responses).to.deep.equal([{ ok: true, body: 42 }]);
  });

  it('should answer the batch with 500s and exit non-zero on an uncaught exception in handler code', async () => {
    const dir = handlerModel(
      'crasher',
      `
exports.handle = () => new Promise(() => { setImmediate(() => { throw new Error('stray callback threw'); }); });
`,
    );
    const w = start();
    w.init(modelConfig('crasher', dir, 'handler.js'));
    await w.waitType('tsserve.ready');
    w.send({
      type: 'tsserve.batch',
      batchId: 9,
      requests: [
        { requestId: 'a', body: 1 },
        { requestId: 'b', body: 2 },
      ],
    });
    const result = await w.waitType<ResultMessage>('tsserve.result');
    expect(result.responses).to.deep.equal([
      { ok: false, status: 500, message: 'worker crashed: stray callback threw' },
      { ok: false, status: 500, message: 'worker crashed: stray callback threw' },
    ]);
    expect(await w.exited).to.equal(1);
    const fatal = w.messages.find((m) => (m as LogMessage).type === 'tsserve.log') as LogMessage;
    expect([fatal.level, fatal.msg.split('\n')[0]]).to.deep.equal([
      'error',
      'fatal: uncaught exception in handler code: Error: stray callback threw',
    ]);
    expect(w.stderr.join('')).to.equal(''); // its log lines went over IPC
  });

  it('should send its diagnostics as tsserve.log messages', async () => {
    const w = start();
    w.send({ type: 'tsserve.bogus' });
    expect(await w.waitType<LogMessage>('tsserve.log')).to.deep.equal({
      type: 'tsserve.log',
      level: 'warn',
      msg: 'ignoring unknown message type "tsserve.bogus"',
    });
  });

  it('should flush buffered metrics on shutdown and exit 0', async () => {
    const dir = handlerModel(
      'late',
      `
exports.handle = (requests, ctx) => {
  // recorded after the batch's own flush, so only the shutdown flush can carry it
  setImmediate(() => ctx.metrics.addCounter('LateCount', 3));
  return requests.map(() => 'ok');
};
`,
    );
    const w = start();
    w.init(modelConfig('late', dir, 'handler.js'));
    await w.waitType('tsserve.ready');
    w.send({ type: 'tsserve.batch', batchId: 1, requests: [{ requestId: 'a', body: null }] });
    await w.waitType('tsserve.result');
    await w.waitFor(() => w.points.some((p) => p.metric === 'HandlerTime'));
    w.send({ type: 'tsserve.shutdown' });
    expect(await w.exited).to.equal(0);
    expect(w.points.filter((p) => p.metric === 'LateCount')).to.deep.equal([
      { metric: 'LateCount', dims: ['late', 'Model'], value: 3, requestId: null },
    ]);
  });

  it('should answer load_failed when initialize throws', async () => {
    const dir = handlerModel(
      'badinit',
      `
exports.initialize = () => { throw new Error('weights missing'); };
exports.handle = (r) => r;
`,
    );
    const w = start();
    w.init(modelConfig('badinit', dir, 'handler.js'));
    const failed = await w.waitType<LoadFailedMessage>('tsserve.load_failed');
    expect(failed.error).to.equal('weights missing');
  });

  it('should refuse a model file outside the model dir for the onnx handler', async () => {
    const dir = path.join(tmp, 'badfile');
    fs.mkdirSync(dir);
    const w = start();
    w.init(modelConfig('badfile', dir, 'onnx', { modelFile: '../mlp/model.onnx' }));
    const failed = await w.waitType<LoadFailedMessage>('tsserve.load_failed');
    expect(failed.error).to.equal(
      `model file refused: "../mlp/model.onnx" resolves outside the model directory ${path.join(realTmp, 'badfile')}`,
    );
  });
});

describe('backend/worker/main (forked) — bodies the channel cannot carry', () => {
  let tmp: string;
  let w: ForkedWorker | null = null;
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-worker-clone-'));
    fs.writeFileSync(
      path.join(tmp, 'handler.js'),
      'exports.handle = (requests) => requests.map(() => ({ fn: () => 1 }));\n',
    );
  });
  after(async () => {
    await w?.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('should answer 500 instead of crashing when a body cannot be serialized', async () => {
    w = new ForkedWorker();
    w.init(modelConfig('clone', tmp, 'handler.js'));
    await w.waitType('tsserve.ready');
    w.send({ type: 'tsserve.batch', batchId: 3, requests: [{ requestId: 'a', body: 1 }] });
    const result = await w.waitType<ResultMessage>('tsserve.result');
    expect(result.responses).to.have.length(1);
    const r = result.responses[0] as { ok: false; status: number; message: string };
    expect([r.ok, r.status]).to.deep.equal([false, 500]);
    expect(r.message).to.match(/^handler returned a value that cannot be sent to the frontend: /);
    w.send({ type: 'tsserve.shutdown' });
    expect(await w.exited).to.equal(0);
  });
});
