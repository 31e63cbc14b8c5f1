import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readModelIo } from '../../../frontend/models/model-io.js';
import type { ModelConfig } from '../../../schema/worker-protocol.js';
import { writeMlp } from '../../../tools/models/mlp.js';

describe('readModelIo (a model graph read at registration)', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-model-io-'));
    writeMlp(path.join(dir, 'good'), { hidden: 4, seed: 1 });
    fs.mkdirSync(path.join(dir, 'bad'));
    // A ModelProto whose graph field (7) claims 5 bytes and has 1.
    fs.writeFileSync(path.join(dir, 'bad', 'model.onnx'), Buffer.from([0x3a, 0x05, 0x01]));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const config = (sub: string, handler: string, modelFile = 'model.onnx'): ModelConfig => ({
    name: sub,
    version: '1.0',
    dir: path.join(dir, sub),
    handler,
    modelFile,
    batchSize: 1,
    maxBatchDelayMs: 0,
    minWorkers: 1,
    maxWorkers: 1,
    responseTimeoutSec: 10,
    threads: 1,
  });

  it("should read a good graph's inputs and outputs", async () => {
    expect(await readModelIo(config('good', 'onnx'))).to.deep.equal({
      io: {
        inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 784] }],
        outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [-1, 10] }],
      },
    });
  });

  it('should refuse an unreadable graph for each built-in tensor handler, naming the file and why', async () => {
    for (const handler of ['onnx', 'image_classifier', 'embedding'])
      expect(await readModelIo(config('bad', handler)), handler).to.deep.equal({
        problem: `model: 'model.onnx' is not a readable ONNX graph ("truncated field")`,
      });
  });

  it('should leave an unreadable graph to a handler that reads its file itself, and a file that is not .onnx unread', async () => {
    expect(await readModelIo(config('bad', 'handler.js'))).to.deep.equal({ io: null });
    expect(await readModelIo(config('bad', 'generate'))).to.deep.equal({ io: null });
    expect(await readModelIo(config('bad', 'onnx', 'weights.bin'))).to.deep.equal({ io: null });
  });
});
