import { expect } from 'chai';
import { BlockPool } from '../../../backend/engine/block-pool.js';

describe('BlockPool', () => {
  it('should allocate all-or-nothing and report usage as referenced / total', () => {
    const p = new BlockPool(4);
    expect(p.allocate(3)).to.deep.equal([0, 1, 2]);
    expect(p.allocate(2)).to.equal(null);
    expect(p.usage()).to.equal(0.75);
    p.free([0, 1, 2]);
    expect(p.usage()).to.equal(0);
    expect(p.numFree).to.equal(4);
  });

  it('should keep freed cached blocks reusable, evict the least recently freed first, tail first', () => {
    const p = new BlockPool(4);
    const a = p.allocate(2)!; // [0, 1]
    p.cache(0, 'h0');
    p.cache(1, 'h1');
    p.free(a); // queue: 2, 3, 1, 0
    expect(p.lookup('h0')).to.equal(0);
    expect(p.allocate(3)).to.deep.equal([2, 3, 1]);
    expect(p.lookup('h1')).to.equal(undefined);
    expect(p.lookup('h0')).to.equal(0);
    p.touch(0);
    expect(p.refCount(0)).to.equal(1);
    expect(p.usage()).to.equal(1);
    expect(p.numCached).to.equal(1);
  });

  it('should keep the first block registered for a hash', () => {
    const p = new BlockPool(2);
    p.allocate(2);
    p.cache(0, 'same');
    p.cache(1, 'same');
    expect(p.lookup('same')).to.equal(0);
    expect(p.numCached).to.equal(1);
  });
});
