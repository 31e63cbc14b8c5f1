import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readOnnxIo } from '../../../frontend/store/onnx-io.js';
import { readOnnxIoAsync } from '../../../frontend/store/onnx-io-async.js';
import { writeHfDir } from '../../../tools/models/hf-dir.js';
import { writeMlp } from '../../../tools/models/mlp.js';

describe('readOnnxIoAsync (an ONNX file of the store, read off the event loop)', function () {
  let root: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-onnx-io-async-'));
  });

  after(() => rmSync(root, { recursive: true, force: true }));

  it('should read the same inputs and outputs as the synchronous scan, initializers left out', async () => {
    const { onnxFile } = writeHfDir(join(root, 'export'), { merged: true });
    const mlp = writeMlp(join(root, 'mlp'), { hidden: 4, seed: 1 });
    for (const file of [onnxFile, mlp]) expect(await readOnnxIoAsync(root, file)).to.deep.equal(readOnnxIo(file));
    const io = await readOnnxIoAsync(root, onnxFile);
    expect(io.inputs.map((i) => `${i.name}:${i.datatype}:${i.shape.join('x')}`).slice(0, 3)).to.deep.equal([
      'input_ids:INT64:-1x-1',
      'attention_mask:INT64:-1x-1',
      'position_ids:INT64:-1x-1',
    ]);
  });

  it('should refuse a FIFO in place of the model without waiting on it', async () => {
    execFileSync('mkfifo', [join(root, 'fifo.onnx')]);
    let err: Error | null = null;
    try {
      await readOnnxIoAsync(root, join(root, 'fifo.onnx'));
    } catch (e) {
      err = e as Error;
    }
    expect(err?.message).to.equal('not a regular file');
  });
});
