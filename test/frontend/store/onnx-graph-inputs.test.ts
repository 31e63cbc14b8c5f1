import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { onnxGraphInputs } from '../../../frontend/store/onnx-graph-inputs.js';
import { GraphBuilder } from '../../../tools/models/onnx-builder.js';

describe('onnxGraphInputs', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-onnx-inputs-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should list the graph inputs in order, skipping the weights written before them', () => {
    const g = new GraphBuilder('g');
    const ids = g.input('input_ids', 'int64', ['B', 'T']);
    g.input('attn_bias', 'float32', ['B', 1, 'T', 'P']);
    g.input('num_logits', 'int64', [1]);
    // 1 MiB of weights: a window's worth many times over, skipped by its length.
    g.initF32('w', new Float32Array(256 * 1024).fill(0.5), [256 * 1024]);
    g.output('out', 'int64', ['B', 'T'], g.op('Identity', [ids]));
    const file = path.join(dir, 'model.onnx');
    g.write(file, 'test graph');
    expect(onnxGraphInputs(file)).to.deep.equal(['input_ids', 'attn_bias', 'num_logits']);
  });

  it('should give null for a file that is missing, empty or not a protobuf (the worker names the problem)', () => {
    const file = path.join(dir, 'model.onnx');
    expect(onnxGraphInputs(file)).to.equal(null);
    fs.writeFileSync(file, '');
    expect(onnxGraphInputs(file)).to.equal(null);
    fs.writeFileSync(file, 'x');
    expect(onnxGraphInputs(file)).to.equal(null);
    fs.writeFileSync(file, 'not an onnx model at all\n');
    expect(onnxGraphInputs(file)).to.equal(null);
  });
});
