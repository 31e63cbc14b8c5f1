import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSession, tensorF32, tensorI64 } from '../../../backend/onnx/ort.js';
import { GraphBuilder } from '../../../tools/models/onnx-builder.js';

describe('backend/onnx/ort', () => {
  let dir: string;
  let file: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsserve-ort-'));
    file = join(dir, 'add.onnx');
    // y = x + bias (float), n = Shape(ids) (int64): one graph exercising both input types.
    const g = new GraphBuilder('add');
    g.input('x', 'float32', ['batch', 3]);
    g.input('ids', 'int64', ['batch', 'seq']);
    const bias = g.initF32('bias', Float32Array.of(1, 2, 3), [3]);
    g.output('y', 'float32', ['batch', 3], g.op('Add', ['x', bias]));
    g.output('n', 'int64', [2], g.op('Shape', ['ids']));
    g.write(file);
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should run a graph with float32 and int64 inputs and return plain typed arrays', async () => {
    const s = await createSession(file);
    try {
      expect(s.inputNames).to.deep.equal(['x', 'ids']);
      expect(s.outputNames).to.deep.equal(['y', 'n']);
      const out = await s.run({
        x: tensorF32(Float32Array.of(10, 20, 30, 40, 50, 60), [2, 3]),
        ids: tensorI64(new BigInt64Array(10), [2, 5]),
      });
      expect(out['y']!.type).to.equal('float32');
      expect(Array.from(out['y']!.data as Float32Array)).to.deep.equal([11, 22, 33, 41, 52, 63]);
      expect(out['y']!.dims).to.deep.equal([2, 3]);
      expect(Array.from(out['n']!.data as BigInt64Array)).to.deep.equal([2n, 5n]);
    } finally {
      await s.release();
    }
  });

  it('should accept a subarray view as input and compute only the requested outputs', async () => {
    const s = await createSession(file, { threads: 2 });
    try {
      const big = Float32Array.of(0, 0, 5, 6, 7, 0);
      const out = await s.run(
        { x: tensorF32(big.subarray(2, 5), [1, 3]), ids: tensorI64(new BigInt64Array(1), [1, 1]) },
        ['y'],
      );
      expect(Object.keys(out)).to.deep.equal(['y']);
      expect(Array.from(out['y']!.data as Float32Array)).to.deep.equal([6, 8, 10]);
    } finally {
      await s.release();
    }
  });
});
