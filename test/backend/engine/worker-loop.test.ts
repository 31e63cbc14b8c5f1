import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readModelDir } from '../../../backend/engine/load.js';
import { runGenerationWorker } from '../../../backend/engine/worker-loop.js';
import { decodeFromGenWorkerMessage } from '../../../schema/engine-ipc.js';
import type { GenStepMessage } from '../../../schema/engine-ipc.js';
import type { MetricsConfig } from '../../../schema/types.js';
import type { InitMessage } from '../../../schema/worker-protocol.js';
import type { EngineCore } from '../../../backend/engine/engine-core.js';
import { collect, fakeEngine } from './harness.js';
import { writeModels } from './real-harness.js';

function initFor(dir: string, engine: Readonly<Record<string, unknown>>, workerIndex = 3): InitMessage {
  return {
    type: 'tsserve.init',
    v: 1,
    workerId: 'W-test',
    workerIndex,
    model: {
      name: 'tiny-lm',
      version: 'default',
      dir,
      handler: 'generate',
      modelFile: 'model.onnx',
      batchSize: 1,
      maxBatchDelayMs: 0,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeoutSec: 60,
      threads: 1,
      engine,
    },
    metrics: {} as MetricsConfig,
  };
}

/** Runs the loop in-process; `script` gets a post function and waits on sent messages. */
function startLoop(init: InitMessage, engine?: EngineCore) {
  const sent: Record<string, unknown>[] = [];
  const logged: string[] = [];
  let handler: ((m: unknown) => void) | null = null;
  const waiters: (() => void)[] = [];
  const done = runGenerationWorker(
    init,
    (m) => {
      sent.push(m as Record<string, unknown>);
      waiters.splice(0).forEach((w) => w());
    },
    (h) => {
      handler = h;
    },
    (line) => logged.push(line),
    ...(engine !== undefined ? ([() => Promise.resolve(engine)] as const) : []),
  );
  const post = (m: unknown): void => handler!(m);
  const until = async (pred: () => boolean): Promise<void> => {
    while (!pred()) await new Promise<void>((r) => waiters.push(r));
  };
  return { sent, logged, post, until, done };
}

describe('runGenerationWorker', function () {
  let root: string;
  let dir: string;

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-gen-worker-'));
    dir = (await writeModels(root)).fast;
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('should answer ready, stream valid step messages, report errors per request, abort, and stop on shutdown', async () => {
    const { sent, post, until, done } = startLoop(initFor(dir, (await readModelDir(dir)).engine));
    await until(() => sent.length > 0);
    const { loadTimeMs, ...ready } = sent[0] as { loadTimeMs: number };
    expect(ready).to.deep.equal({ type: 'tsserve.ready', workerId: 'W-test' });
    expect(loadTimeMs).to.be.a('number').and.above(0); // measured around a real model load
    post({
      type: 'tsserve.gen.add',
      requestId: 'a',
      prompt: 'Hello',
      params: { temperature: 0, max_tokens: 6, ignore_eos: true },
    });
    post({
      type: 'tsserve.gen.add',
      requestId: 'b',
      promptTokenIds: [256, 104, 105],
      params: { temperature: 0, max_tokens: 4, ignore_eos: true },
    });
    post({
      type: 'tsserve.gen.add',
      requestId: 'c',
      prompt: 'long one',
      params: { temperature: 0, max_tokens: 500, ignore_eos: true },
    });
    post({ type: 'tsserve.gen.add', requestId: 'bad', prompt: 'x', params: { top_p: 2 } });
    post({ type: 'tsserve.gen.add', requestId: 'toolong', prompt: 'x'.repeat(2000), params: {} });
    await until(() => sent.some((m) => m.type === 'tsserve.gen.step'));
    post({ type: 'tsserve.gen.abort', requestId: 'c' });
    post({ type: 'tsserve.shutdown' });
    await done;
    post({ type: 'tsserve.gen.add', requestId: 'late', prompt: 'x', params: {} });
    const steps = sent.filter((m) => m.type === 'tsserve.gen.step') as unknown as GenStepMessage[];
    for (const m of sent.slice(1)) expect(decodeFromGenWorkerMessage(m).ok, JSON.stringify(m)).to.equal(true);
    expect(steps.every((s) => s.engine === 3)).to.equal(true);
    const errors = sent.filter((m) => m.type === 'tsserve.gen.error');
    expect(errors).to.deep.equal([
      {
        type: 'tsserve.gen.error',
        engine: 3,
        requestId: 'bad',
        message: 'invalid tsserve.gen.add: params.top_p: must be a number in (0, 1]',
      },
      {
        type: 'tsserve.gen.error',
        engine: 3,
        requestId: 'toolong',
        message: 'the prompt has 2001 tokens; this model accepts at most 1023 so one can be generated',
      },
    ]);
    const res = collect(steps);
    expect(res.get('a/0')).to.deep.include({ finishReason: 'length', numGenerationTokens: 6 });
    expect(res.get('b/0')).to.deep.include({ finishReason: 'length', numGenerationTokens: 4 });
    expect(res.get('c/0')!.finishReason).to.equal('abort');
    expect(res.get('a/0')!.events.map((e) => e.type)).to.deep.equal(['QUEUED', 'SCHEDULED']);
    expect(steps[steps.length - 1]!.stats).to.deep.include({ numRunning: 0, numWaiting: 0, kvCacheUsage: 0 });
  });

  it("should fail only the sequences of a failed run and log why, never the engine's other requests", async () => {
    const { engine, runner } = fakeEngine();
    runner.failNext.add(1); // the second request's first run ('bad' is seq 1)
    const { sent, logged, post, until, done } = startLoop(initFor(dir, {}), engine);
    await until(() => sent.length > 0);
    post({
      type: 'tsserve.gen.add',
      requestId: 'ok',
      prompt: 'fine',
      params: { temperature: 0, max_tokens: 5, ignore_eos: true },
    });
    post({
      type: 'tsserve.gen.add',
      requestId: 'bad',
      prompt: 'doomed',
      params: { temperature: 0, max_tokens: 5, ignore_eos: true },
    });
    const res = () => collect(sent.filter((m) => m.type === 'tsserve.gen.step') as unknown as GenStepMessage[]);
    await until(() => res().get('ok/0')?.finishReason !== undefined);
    post({ type: 'tsserve.shutdown' });
    await done;
    expect([
      res().get('ok/0')!.finishReason,
      res().get('ok/0')!.numGenerationTokens,
      res().get('bad/0')!.finishReason,
    ]).to.deep.equal(['length', 5, 'error']);
    // No engine-wide error (the frontend would fail 'ok' with it): the reason goes to the log.
    expect(sent.filter((m) => m.type === 'tsserve.gen.error')).to.deep.equal([]);
    expect(logged).to.deep.equal([
      'generation engine 3: model run failed: injected failure for seq 1 (requests bad finished with error)',
    ]);
  });

  it('should answer load_failed when the model cannot be loaded', async () => {
    const { sent, done } = startLoop(initFor(join(root, 'missing'), (await readModelDir(dir)).engine));
    await done;
    expect(sent.length).to.equal(1);
    const missing = join(root, 'missing', 'model.onnx');
    expect(sent[0]).to.deep.equal({
      type: 'tsserve.load_failed',
      workerId: 'W-test',
      error: `generation engine: Load model from ${missing} failed:Load model ${missing} failed. File doesn't exist`,
    });
  });
});
