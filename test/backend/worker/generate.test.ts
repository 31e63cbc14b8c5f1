import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { tinyLmEngineConfig } from '../../../tools/models/demo-models.js';
import { writeTinyLm } from '../../../tools/models/tiny-lm.js';
import type { ReadyMessage } from '../../../schema/worker-protocol.js';
import { ForkedWorker, modelConfig } from './forked-worker.js';

describe('backend/worker/main with handler: generate (forked)', () => {
  let tmp: string;
  let worker: ForkedWorker | null = null;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-genworker-'));
    writeTinyLm(path.join(tmp, 'tiny-lm'), { layout: 'fast' });
  });
  afterEach(async () => {
    await worker?.kill();
    worker = null;
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('should hand the worker to the engine loop: ready, steps for an added request, exit 0 on shutdown', async () => {
    const w = new ForkedWorker();
    worker = w;
    w.init(
      modelConfig('tiny-lm', path.join(tmp, 'tiny-lm'), 'generate', {
        engine: tinyLmEngineConfig('fast'),
        batchSize: 1,
      }),
    );
    const ready = await w.waitType<ReadyMessage>('tsserve.ready');
    expect(ready.workerId).to.equal('W-test-tiny-lm');
    w.send({ type: 'tsserve.gen.add', requestId: 'g1', prompt: 'hi', params: { max_tokens: 2, temperature: 0 } });
    await w.waitType('tsserve.gen.step');
    w.send({ type: 'tsserve.shutdown' });
    expect(await w.exited).to.equal(0);
  });
});
