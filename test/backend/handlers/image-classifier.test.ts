import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readLabels, softmaxInPlace, topK } from '../../../backend/handlers/image-classifier.js';

describe('image_classifier handler helpers', () => {
  it('should softmax logits without overflow', () => {
    const xs = Float32Array.of(1000, 1000, 999);
    softmaxInPlace(xs);
    const e = Math.exp(-1);
    expect(Array.from(xs).map((x) => Math.round(x * 1e6) / 1e6)).to.deep.equal(
      [1 / (2 + e), 1 / (2 + e), e / (2 + e)].map((x) => Math.round(Math.fround(x) * 1e6) / 1e6),
    );
  });

  it('should answer the k best classes best first, ties by class index', () => {
    const got = topK(Float32Array.of(0.1, 0.4, 0.2, 0.4), 3, (i) => ['cat', 'dog', 'eel', 'fox'][i]!);
    expect(Object.entries(got)).to.deep.equal([
      ['dog', Math.fround(0.4)],
      ['fox', Math.fround(0.4)],
      ['eel', Math.fround(0.2)],
    ]);
  });

  it("should read TorchServe's index_to_name.json in both shapes, and class indices when it is absent", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-labels-'));
    try {
      fs.writeFileSync(path.join(dir, 'index_to_name.json'), '{"0": ["n01440764", "tench"], "1": "goldfish"}');
      expect([...(await readLabels(dir, 'index_to_name.json'))]).to.deep.equal([
        [0, 'tench'],
        [1, 'goldfish'],
      ]);
      fs.writeFileSync(path.join(dir, 'bad.json'), '{"x": "y"}');
      let err: unknown;
      await readLabels(dir, 'bad.json').catch((e: unknown) => (err = e));
      expect((err as Error).message).to.equal('bad.json: entry "x" is not index → name');
      fs.rmSync(path.join(dir, 'index_to_name.json'));
      expect((await readLabels(dir, 'index_to_name.json')).size).to.equal(0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
