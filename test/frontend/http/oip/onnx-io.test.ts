import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseOnnxIo, readOnnxIo } from '../../../../frontend/http/oip/onnx-io.js';
import { GraphBuilder } from '../../../../tools/models/onnx-builder.js';
import { writeMlp } from '../../../../tools/models/mlp.js';

describe('readOnnxIo', () => {
  let dir = '';
  before(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-onnx-io-')); });
  after(() => { fs.rmSync(dir, { recursive: true, force: true }); });

  it('should read the demo MLP\'s input and output with -1 for the symbolic batch dimension', async () => {
    const file = writeMlp(dir, { hidden: 8, seed: 1 });
    expect(await readOnnxIo(file)).to.deep.equal({
      inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 784] }],
      outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [-1, 10] }],
    });
  });

  it('should map ONNX element types to the protocol\'s datatypes', () => {
    const g = new GraphBuilder('types');
    const ids = g.input('ids', 'int64', ['batch', 'seq']);
    const mask = g.input('mask', 'bool', [1, 'seq']);
    g.output('same', 'int64', ['batch', 'seq'], g.op('Identity', [ids]));
    g.output('m', 'bool', [1, 'seq'], g.op('Identity', [mask]));
    const file = path.join(dir, 'types.onnx');
    g.write(file, 'types');
    expect(parseOnnxIo(fs.readFileSync(file))).to.deep.equal({
      inputs: [{ name: 'ids', datatype: 'INT64', shape: [-1, -1] }, { name: 'mask', datatype: 'BOOL', shape: [1, -1] }],
      outputs: [{ name: 'same', datatype: 'INT64', shape: [-1, -1] }, { name: 'm', datatype: 'BOOL', shape: [1, -1] }],
    });
  });

  it('should throw on a file that is not an ONNX model', () => {
    expect(() => parseOnnxIo(Buffer.from([0x0a, 0x05, 0x01]))).to.throw('truncated field');
  });
});
