import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSession, tensorF32 } from '../../../backend/onnx/ort.js';
import { GraphBuilder } from '../../../tools/models/onnx-builder.js';

describe('GraphBuilder', () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsserve-builder-'));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  function build(): GraphBuilder {
    const g = new GraphBuilder('t');
    const x = g.input('x', 'float32', ['n']);
    const doubled = g.op('Add', [x, x]);
    g.output('doubled', 'float32', ['n'], doubled); // renamed in place
    g.output('tripled', 'float32', ['n'], g.op('Add', [doubled, x])); // a later node still names the old value
    g.output('echo', 'float32', ['n'], x); // a graph input needs an Identity
    g.output('two', 'float32', [], g.constF32(2)); // so does an initializer
    return g;
  }

  it('should expose renamed node outputs, inputs and initializers as graph outputs', async () => {
    const file = join(dir, 't.onnx');
    build().write(file);
    const s = await createSession(file);
    try {
      expect(s.outputNames).to.deep.equal(['doubled', 'tripled', 'echo', 'two']);
      const out = await s.run({ x: tensorF32(Float32Array.of(1, 2), [2]) });
      expect(Array.from(out['doubled']!.data as Float32Array)).to.deep.equal([2, 4]);
      expect(Array.from(out['tripled']!.data as Float32Array)).to.deep.equal([3, 6]);
      expect(Array.from(out['echo']!.data as Float32Array)).to.deep.equal([1, 2]);
      expect(Array.from(out['two']!.data as Float32Array)).to.deep.equal([2]);
    } finally {
      await s.release();
    }
  });

  it('should serialize the same calls to the same bytes', () => {
    expect(Buffer.from(build().toBytes()).equals(Buffer.from(build().toBytes()))).to.equal(true);
  });
});
