import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSession, tensorF32 } from '../../../backend/onnx/ort.js';
import { MLP_CLASSES, MLP_HIDDEN, MLP_INPUT, writeMlp } from '../../../tools/models/mlp.js';

describe('tools/models/mlp', () => {
  let dir: string;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'tsserve-mlp-'));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('should map input [batch, 784] to probabilities [batch, 10] that sum to 1 per row', async () => {
    const s = await createSession(writeMlp(join(dir, 'a'), { hidden: MLP_HIDDEN, seed: 7 }));
    try {
      expect(s.inputNames).to.deep.equal(['input']);
      expect(s.outputNames).to.deep.equal(['probabilities']);
      const x = new Float32Array(3 * MLP_INPUT).map((_, i) => ((i * 37) % 101) / 101);
      const out = (await s.run({ input: tensorF32(x, [3, MLP_INPUT]) }))['probabilities']!;
      expect(out.dims).to.deep.equal([3, MLP_CLASSES]);
      const p = out.data as Float32Array;
      for (let r = 0; r < 3; r++) {
        const row = Array.from(p.subarray(r * 10, r * 10 + 10));
        expect(Math.abs(row.reduce((a, b) => a + b, 0) - 1)).to.be.below(1e-5);
        expect(row.every((v) => v >= 0)).to.equal(true);
      }
    } finally {
      await s.release();
    }
  });

  it('should write byte-identical files for one seed and different ones for another', () => {
    const hash = (f: string): string => createHash('sha256').update(readFileSync(f)).digest('hex');
    const a = hash(writeMlp(join(dir, 'b1'), { hidden: 64, seed: 3 }));
    const b = hash(writeMlp(join(dir, 'b2'), { hidden: 64, seed: 3 }));
    const c = hash(writeMlp(join(dir, 'b3'), { hidden: 64, seed: 4 }));
    expect(a).to.equal(b);
    expect(a).to.not.equal(c);
  });

  it('should apply a repeated hidden layer without growing the file much (mlp-heavy)', async () => {
    const one = readFileSync(writeMlp(join(dir, 'r1'), { hidden: 128, seed: 1 })).length;
    const file = writeMlp(join(dir, 'r4'), { hidden: 128, seed: 1, repeat: 4 });
    expect(readFileSync(file).length - one).to.be.below(1000);
    const s = await createSession(file);
    try {
      const out = (await s.run({ input: tensorF32(new Float32Array(MLP_INPUT).fill(0.5), [1, MLP_INPUT]) }))[
        'probabilities'
      ]!;
      expect(out.dims).to.deep.equal([1, MLP_CLASSES]);
    } finally {
      await s.release();
    }
  });
});
