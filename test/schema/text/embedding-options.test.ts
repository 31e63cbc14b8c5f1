import { expect } from 'chai';
import { parseEmbeddingOptions, poolHidden } from '../../../schema/text/embedding-options.js';

describe('embedding options and pooling', () => {
  it('should default to CLS pooling, normalized, tokenizer.json, 512 tokens, no Matryoshka dimensions', () => {
    expect(parseEmbeddingOptions(undefined)).to.deep.equal({
      pooling: 'cls',
      normalize: true,
      tokenizer: 'tokenizer.json',
      maxModelLen: 512,
      dimensions: [],
      maxInputs: 2048,
    });
    const problems: string[] = [];
    parseEmbeddingOptions({ pooling: 'max', normalize: 1, dimensions: [0], extra: true }, problems);
    expect(problems).to.deep.equal([
      'handlerOptions.extra: unknown option of handler embedding',
      'handlerOptions.pooling: must be mean, cls or last (got "max")',
      'handlerOptions.normalize: must be true or false (got 1)',
      'handlerOptions.dimensions: must be a list of output sizes (got [0])',
    ]);
  });

  it('should pool the real rows only (mean, first, last) and L2-normalize, truncating to dims first', () => {
    // 3 rows of width 2, the last one padding.
    const h = Float32Array.of(1, 2, 3, 6, 100, 100);
    expect(Array.from(poolHidden(h, 2, 2, 'mean', false))).to.deep.equal([2, 4]);
    expect(Array.from(poolHidden(h, 2, 2, 'cls', false))).to.deep.equal([1, 2]);
    expect(Array.from(poolHidden(h, 2, 2, 'last', false))).to.deep.equal([3, 6]);
    expect(Array.from(poolHidden(Float32Array.of(3, 4), 1, 2, 'cls', true))).to.deep.equal(
      [0.6, 0.800000011920929].map(Math.fround),
    );
    expect(Array.from(poolHidden(Float32Array.of(3, 4), 1, 2, 'cls', true, 1))).to.deep.equal([1]);
    expect(Array.from(poolHidden(Float32Array.of(0, 0), 1, 2, 'cls', true))).to.deep.equal([0, 0]);
  });
});
