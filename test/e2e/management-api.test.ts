/**
 * The management API as a TorchServe user drives it, on the real server: urls that point out of
 * the store, a name registered twice at once, and an unregister while the workers load. After
 * each, `/models` and the server's child processes show nothing was left behind.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { call, slowModelStore, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { configArgs } from './config-args.js';
import { until } from '../support/until.js';

/** The pids of the server's child processes (its workers), sorted (Linux's /proc). */
function children(server: Tsserve): number[] {
  const pid = server.proc.pid!;
  const text = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === ''
    ? []
    : text
        .split(/\s+/)
        .map(Number)
        .sort((a, b) => a - b);
}

/** The workers `/models/{name}` describes. */
async function workersOf(
  server: Tsserve,
  name: string,
): Promise<Array<{ id: string; pid: number | null; status: string }>> {
  const r = await call('GET', `${server.management}/models/${name}`);
  return r.status === 200
    ? (r.json as Array<{ workers: Array<{ id: string; pid: number | null; status: string }> }>)[0]!.workers
    : [];
}

const bad = (status: number, type: string, message: string): unknown => ({
  status,
  json: { code: status, type, message },
});

describe('tsserve start: the management API leaves no model nor worker behind (real server)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let store: string;
  let outside: string;
  /** The one worker of `fast`, loaded at start. */
  let fastPids: number[];

  before(async () => {
    // `loading` never loads within the test: its DELETE always comes while its worker starts.
    store = slowModelStore({ fast: {}, loading: { loadMs: 600_000 } });
    // A valid model outside the store, reachable through a symlink in it.
    outside = tempDir('outside');
    for (const f of ['handler.js', 'model-config.yaml'])
      fs.copyFileSync(path.join(store, 'fast', f), path.join(outside, f));
    fs.symlinkSync(outside, path.join(store, 'out-link'));
    server = await startTsserve({
      store,
      args: [...configArgs(), '--models', 'fast=fast', '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
    fastPids = (await workersOf(server, 'fast')).map((w) => w.pid!);
    expect(children(server)).to.deep.equal(fastPids);
  });
  after(() => {
    server?.kill();
    fs.rmSync(outside, { recursive: true, force: true });
  });

  const listed = async (): Promise<unknown> => (await call('GET', `${server.management}/models`)).json;
  const only = { models: [{ modelName: 'fast', modelVersion: '1.0', modelUrl: 'fast' }] };

  it('should refuse every url leading out of the store with 400 naming it, loading nothing', async () => {
    const root = fs.realpathSync(store);
    const reg = (url: string): Promise<unknown> =>
      call('POST', `${server.management}/models?url=${encodeURIComponent(url)}&model_name=evil`);
    const refused = (message: string): unknown => bad(400, 'BadRequestException', message);
    expect(await reg('../outside')).to.deep.equal(refused("path '../outside' must not contain '..'"));
    expect(await reg(outside)).to.deep.equal(refused(`path '${outside}' must be relative to ${root}`));
    expect(await reg('out-link')).to.deep.equal(refused(`path 'out-link' is a symlink leading outside ${root}`));
    expect(await reg(`file://${outside}`)).to.deep.equal(
      refused(
        `url 'file://${outside}' is a URL; tsserve downloads no model: give a model directory inside the model store ${root}`,
      ),
    );
    expect(await reg('https://example.com/fast.mar')).to.deep.equal(
      refused(
        `url 'https://example.com/fast.mar' is a URL; tsserve downloads no model: give a model directory inside the model store ${root}`,
      ),
    );
    expect(await call('POST', `${server.management}/models?url=fast&model_name=typo&initial_worker=2`)).to.deep.equal(
      refused(
        'parameter initial_worker is not one POST /models takes (it takes url, model_name, batch_size, max_batch_delay, initial_workers, response_timeout, synchronous)',
      ),
    );
    expect(await listed()).to.deep.equal(only);
    expect(children(server)).to.deep.equal(fastPids);
  });

  it('should refuse a built-in onnx model whose graph cannot be read with 400 at registration, naming the file and why, starting no worker', async () => {
    const dir = path.join(store, 'bad-graph');
    fs.mkdirSync(dir);
    // A ModelProto whose graph field (7) claims 5 bytes and has 1.
    fs.writeFileSync(path.join(dir, 'model.onnx'), Buffer.from([0x3a, 0x05, 0x01]));
    fs.writeFileSync(path.join(dir, 'model-config.yaml'), 'handler: onnx\nmodel: model.onnx\n');
    expect(await call('POST', `${server.management}/models?url=bad-graph&model_name=bad-graph`)).to.deep.equal(
      bad(
        400,
        'BadRequestException',
        'invalid model config for bad-graph:\n  model: \'model.onnx\' is not a readable ONNX graph ("truncated field")',
      ),
    );
    expect(await listed()).to.deep.equal(only);
    expect(children(server)).to.deep.equal(fastPids);
  });

  it('should register a name asked twice at once exactly once: 200 and 409, one model with its one worker', async () => {
    const url = `${server.management}/models?url=fast&model_name=twin&synchronous=true`;
    const answers = await Promise.all([call('POST', url), call('POST', url)]);
    answers.sort((a, b) => a.status - b.status);
    expect(answers).to.deep.equal([
      { status: 200, json: { status: 'Model "twin" Version: 1.0 registered with 1 initial workers' } },
      bad(
        409,
        'ConflictStatusException',
        'Model version 1.0 is already registered for model twin (a model has one version here: unregister it to register another)',
      ),
    ]);
    const twin = (await workersOf(server, 'twin')).map((w) => w.pid!);
    expect(twin.length).to.equal(1);
    expect(children(server)).to.deep.equal([...fastPids, ...twin].sort((a, b) => a - b));
    expect(await call('DELETE', `${server.management}/models/twin`)).to.deep.equal({
      status: 200,
      json: { status: 'Model "twin" unregistered' },
    });
    await until(() => (children(server).join() === fastPids.join() ? true : null), {
      message: "twin's worker to exit",
      observe: () => children(server),
    });
    expect(await listed()).to.deep.equal(only);
  });

  it('should answer a registration whose model was unregistered while its worker loaded 409 (regression: 500 "Failed to start workers … the reason is in ts_log.log") and stop that worker', async () => {
    const registering = call('POST', `${server.management}/models?url=loading&synchronous=true`);
    const [loader] = await until(
      async () => {
        const ws = await workersOf(server, 'loading');
        return ws.length === 1 && (ws[0]!.pid ?? 0) > 0 ? ws : null;
      },
      { message: 'the loading worker forked' },
    );
    expect(loader!.status).to.equal('STARTING');
    expect(await call('DELETE', `${server.management}/models/loading`)).to.deep.equal({
      status: 200,
      json: { status: 'Model "loading" unregistered' },
    });
    expect(await registering).to.deep.equal(
      bad(
        409,
        'ConflictStatusException',
        'model loading was unregistered while its workers were starting; it is not registered',
      ),
    );
    await until(() => (children(server).join() === fastPids.join() ? true : null), {
      message: 'the loading worker to exit',
      observe: () => children(server),
    });
    expect(await listed()).to.deep.equal(only);
  });
});
