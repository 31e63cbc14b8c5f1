import { expect } from 'chai';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { parseOnnxIo, readOnnxIo, scanOnnxIo } from '../../../frontend/store/onnx-io.js';
import { GraphBuilder } from '../../../tools/models/onnx-builder.js';
import { writeHfDir } from '../../../tools/models/hf-dir.js';
import { writeMlp } from '../../../tools/models/mlp.js';

/** The message a promise rejects with (the test fails if it resolves). */
async function rejection(p: Promise<unknown>): Promise<string> {
  return p.then(
    () => 'resolved',
    (e: Error) => e.message,
  );
}

describe('readOnnxIo', () => {
  // Also the model-config check's reader of a generation graph's inputs (engine-graph.ts).
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-onnx-io-'));
  });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("should read the demo MLP's input and output with -1 for the symbolic batch dimension", async () => {
    const file = writeMlp(dir, { hidden: 8, seed: 1 });
    expect(await readOnnxIo(file)).to.deep.equal({
      inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 784] }],
      outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [-1, 10] }],
    });
  });

  it("should map ONNX element types to the protocol's datatypes", async () => {
    const g = new GraphBuilder('types');
    const ids = g.input('ids', 'int64', ['batch', 'seq']);
    const mask = g.input('mask', 'bool', [1, 'seq']);
    g.output('same', 'int64', ['batch', 'seq'], g.op('Identity', [ids]));
    g.output('m', 'bool', [1, 'seq'], g.op('Identity', [mask]));
    const file = path.join(dir, 'types.onnx');
    g.write(file, 'types');
    expect(parseOnnxIo(fs.readFileSync(file))).to.deep.equal({
      inputs: [
        { name: 'ids', datatype: 'INT64', shape: [-1, -1] },
        { name: 'mask', datatype: 'BOOL', shape: [1, -1] },
      ],
      outputs: [
        { name: 'same', datatype: 'INT64', shape: [-1, -1] },
        { name: 'm', datatype: 'BOOL', shape: [1, -1] },
      ],
    });
  });

  it('should throw on a file that is not an ONNX model', async () => {
    expect(() => parseOnnxIo(Buffer.from([0x0a, 0x05, 0x01]))).to.throw('truncated field');
    const file = path.join(dir, 'bad.onnx');
    fs.writeFileSync(file, Buffer.from([0x0a, 0x05, 0x01]));
    expect(await rejection(readOnnxIo(file))).to.include('truncated field');
    // Missing, empty, or text: each throws (the model-config check then leaves it to the worker's load).
    expect(await rejection(readOnnxIo(path.join(dir, 'missing.onnx')))).to.include('missing.onnx: no such file');
    fs.writeFileSync(file, '');
    expect(await rejection(readOnnxIo(file))).to.include('no graph in the ONNX model');
    fs.writeFileSync(file, 'not an onnx model at all\n');
    expect(await rejection(readOnnxIo(file))).to.include('unsupported wire type 6');
  });

  it('should read the IO without the weights: what the whole-file parse finds, from a fraction of the bytes (regression: the whole file was read into the frontend)', async () => {
    const file = writeMlp(path.join(dir, 'full'), { hidden: 1024, seed: 42 });
    const size = fs.statSync(file).size;
    const { io, bytesRead } = await scanOnnxIo(file);
    expect(io).to.deep.equal(parseOnnxIo(fs.readFileSync(file)));
    expect(io.inputs.map((i) => i.name)).to.deep.equal(['input']);
    // The demo MLP is 7.4 MB of weights; the walk reads a 64 KiB window per initializer header or so.
    expect([size > 7_000_000, bytesRead < 1_000_000]).to.deep.equal([true, true]);
  });

  it('should leave out an initializer listed as a graph input (IR < 4), as the whole-file parse does', async () => {
    const g = new GraphBuilder('init');
    const x = g.input('x', 'float32', ['batch', 4]);
    const w = g.initF32('w', Float32Array.of(0, 1, 2, 3), [4]);
    g.input('w', 'float32', [4]);
    g.output('y', 'float32', ['batch', 4], g.op('Add', [x, w]));
    const file = path.join(dir, 'init.onnx');
    g.write(file, 'init');
    expect(await readOnnxIo(file)).to.deep.equal(parseOnnxIo(fs.readFileSync(file)));
    expect((await readOnnxIo(file)).inputs.map((i) => i.name)).to.deep.equal(['x']);
  });

  it("should read a Hugging Face export's inputs inside the store (the one reader hf-model-dir.ts uses too)", async () => {
    const { onnxFile } = writeHfDir(path.join(dir, 'export'), { merged: true });
    const io = await readOnnxIo(onnxFile, dir);
    expect(io).to.deep.equal(parseOnnxIo(fs.readFileSync(onnxFile)));
    expect(io.inputs.map((i) => `${i.name}:${i.datatype}:${i.shape.join('x')}`).slice(0, 3)).to.deep.equal([
      'input_ids:INT64:-1x-1',
      'attention_mask:INT64:-1x-1',
      'position_ids:INT64:-1x-1',
    ]);
  });

  it('should refuse a FIFO in place of the model without waiting on it, naming the file inside the store', async () => {
    execFileSync('mkfifo', [path.join(dir, 'fifo.onnx')]);
    expect(await rejection(readOnnxIo(path.join(dir, 'fifo.onnx'), path.dirname(dir)))).to.equal(
      `${path.basename(dir)}/fifo.onnx: not a regular file`,
    );
  });
});
