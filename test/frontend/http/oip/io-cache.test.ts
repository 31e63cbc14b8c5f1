import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { settledTensorSpec, tensorSpecFor } from '../../../../frontend/http/oip/io-cache.js';
import type { ServedModel } from '../../../../frontend/models/served-model.js';
import { DEFAULT_MAX_BATCH_BYTES } from '../../../../schema/tensors.js';
import { writeMlp } from '../../../../tools/models/mlp.js';

describe('settledTensorSpec (the /predictions route reads a known spec without waiting)', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-io-cache-'));
    writeMlp(path.join(dir, 'mlp'), { hidden: 4, seed: 1 });
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const served = (name: string, handler: string): ServedModel =>
    ({ config: { name, dir: path.join(dir, name), handler, modelFile: 'model.onnx' } }) as unknown as ServedModel;

  it('should be undefined until tensorSpecFor has resolved, then the very spec it resolved to', async () => {
    const m = served('mlp', 'onnx');
    expect(settledTensorSpec(m)).to.equal(undefined);
    const pending = tensorSpecFor(m);
    expect(settledTensorSpec(m)).to.equal(undefined);
    const spec = await pending;
    expect(spec).to.deep.equal({
      model: 'mlp',
      inputs: [{ name: 'input', dtype: 'float32', datatype: 'FP32', shape: [-1, 784] }],
      outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [-1, 10] }],
      batched: true,
      pad: {},
      maxBatchBytes: DEFAULT_MAX_BATCH_BYTES,
    });
    expect(settledTensorSpec(m)).to.equal(spec);
  });

  it('should settle to null for a model whose handler is not onnx and for an onnx model without a graph', async () => {
    const custom = served('mlp', 'custom');
    const missing = served('absent', 'onnx');
    expect([await tensorSpecFor(custom), await tensorSpecFor(missing)]).to.deep.equal([null, null]);
    expect([settledTensorSpec(custom), settledTensorSpec(missing)]).to.deep.equal([null, null]);
  });
});
