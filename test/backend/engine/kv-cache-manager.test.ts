/**
 * `KvCacheManager` keeps each sequence's block table and row over the `BlockPool`, and shares
 * full blocks through the prefix cache. These tests drive it as the scheduler does (lookup,
 * allocate, then `numComputed` set and `cacheComputed` after the run) with block size 4.
 */
import { expect } from 'chai';
import { KvCacheManager, rowCapacityFor } from '../../../backend/engine/kv-cache-manager.js';
import type { RowBudget } from '../../../backend/engine/kv-cache-manager.js';
import { prngFor, resolveSamplingParams } from '../../../backend/engine/sampling.js';
import { Sequence } from '../../../backend/engine/sequence.js';
import { stopRuleFor } from '../../../backend/engine/stopping.js';
import { StreamDecoder } from '../../../backend/engine/tokenizer.js';
import type { EngineConfig } from '../../../backend/engine/config.js';

const CFG = { eosTokenIds: [257], suppressTokenIds: [] } as unknown as EngineConfig;
const BS = 4;
const ROWS: RowBudget = { numRowTokens: 64, minRow: 8, maxModelLen: 32 };

let nextId = 0;
/** A sequence holding `tokens` as its prompt. */
function seqOf(tokens: readonly number[]): Sequence {
  const sp = resolveSamplingParams({ max_tokens: 16 });
  return new Sequence(`r${nextId}`, 0, nextId++, tokens, sp, prngFor(1), new StreamDecoder(), stopRuleFor(CFG, sp));
}

/** Tokens `from`, `from + 1`, … (`n` of them). */
const run = (from: number, n: number): number[] => Array.from({ length: n }, (_, i) => from + i);

/** Admits `seq` as the scheduler does (lookup, allocate its whole prompt) and runs it: its prompt is computed and cached. */
function prefill(kv: KvCacheManager, seq: Sequence): void {
  const hit = kv.lookup(seq);
  expect(kv.allocate(seq, seq.tokens.length - hit.numTokens, hit)).to.equal(true);
  seq.numComputed = seq.tokens.length;
  kv.cacheComputed(seq);
}

describe('KvCacheManager', () => {
  it('should give row capacities of minRow times a power of two, capped at maxModelLen rounded up to minRow', () => {
    const rows: RowBudget = { numRowTokens: 64, minRow: 4, maxModelLen: 10 };
    expect([0, 1, 4, 5, 8, 9, 12, 100].map((p) => rowCapacityFor(p, rows))).to.deep.equal([4, 4, 4, 8, 8, 12, 12, 12]);
    const exact: RowBudget = { numRowTokens: 64, minRow: 4, maxModelLen: 16 };
    expect([15, 16, 17].map((p) => rowCapacityFor(p, exact))).to.deep.equal([16, 16, 16]);
  });

  it('should allocate the blocks and row a prefill needs and count both in usage (10 tokens: 3 blocks, row 16 of 32 + 64)', () => {
    const kv = new KvCacheManager(8, BS, true, ROWS);
    const seq = seqOf(run(1, 10));
    expect(kv.blocksFor(10)).to.equal(3);
    expect(kv.allocate(seq, 10)).to.equal(true);
    expect(seq.blockTable).to.deep.equal([0, 1, 2]);
    expect(kv.rowCapacity(seq)).to.equal(16);
    expect(kv.rowPositionsUsed).to.equal(16);
    expect(kv.pool.numUsed).to.equal(3);
    expect(kv.usage()).to.equal((3 * 4 + 16) / (8 * 4 + 64));
    // The two full blocks are registered ahead of the run; the partial third is not.
    expect(kv.takeRegistered()).to.deep.equal([
      { block: 0, seq },
      { block: 1, seq },
    ]);
    expect(kv.takeRegistered()).to.deep.equal([]);
    expect(kv.pool.numCached).to.equal(2);
    expect(seq.blocksCached).to.equal(2);
  });

  it('should add a block only when a decode crosses a block boundary, and cache a block once it is full and computed', () => {
    const kv = new KvCacheManager(8, BS, true, ROWS);
    const seq = seqOf(run(1, 10));
    prefill(kv, seq);
    kv.takeRegistered();
    for (const t of [11, 12]) {
      seq.tokens.push(t);
      expect(kv.allocate(seq, 1)).to.equal(true);
      seq.numComputed++;
      kv.cacheComputed(seq);
    }
    expect(seq.blockTable).to.deep.equal([0, 1, 2]);
    expect(kv.pool.numCached).to.equal(3);
    expect(seq.blocksCached).to.equal(3);
    // Single-token items register after their run, not ahead.
    expect(kv.takeRegistered()).to.deep.equal([]);
    seq.tokens.push(13);
    expect(kv.allocate(seq, 1)).to.equal(true);
    expect(seq.blockTable).to.deep.equal([0, 1, 2, 3]);
    expect(kv.rowCapacity(seq)).to.equal(16);
  });

  it('should refuse, changing nothing, when the pool is short of blocks', () => {
    const kv = new KvCacheManager(2, BS, true, ROWS);
    const seq = seqOf(run(1, 9));
    expect(kv.allocate(seq, 9)).to.equal(false);
    expect(seq.blockTable).to.deep.equal([]);
    expect([kv.pool.numFree, kv.pool.numCached, kv.rowPositionsUsed, kv.rowCapacity(seq), kv.usage()]).to.deep.equal([
      2, 0, 0, 0, 0,
    ]);
    expect(kv.takeRegistered()).to.deep.equal([]);
  });

  it('should refuse, changing nothing, when the row budget cannot hold the row, and grow a row by doubling within it', () => {
    const kv = new KvCacheManager(16, BS, true, { numRowTokens: 24, minRow: 8, maxModelLen: 64 });
    const a = seqOf(run(1, 5));
    expect(kv.allocate(a, 5)).to.equal(true);
    expect(kv.rowCapacity(a)).to.equal(8);
    a.numComputed = 5;
    a.tokens.push(6, 7, 8, 9);
    expect(kv.allocate(a, 4)).to.equal(true);
    expect(kv.rowCapacity(a)).to.equal(16);
    expect(kv.rowPositionsUsed).to.equal(16);
    const b = seqOf(run(100, 9));
    // b needs 16 positions: 16 + 16 > 24.
    expect(kv.allocate(b, 9)).to.equal(false);
    expect([b.blockTable, kv.rowCapacity(b), kv.rowPositionsUsed, kv.pool.numUsed]).to.deep.equal([[], 0, 16, 3]);
    const c = seqOf(run(200, 3));
    expect(kv.allocate(c, 3)).to.equal(true);
    expect(kv.rowPositionsUsed).to.equal(24);
  });

  it('should hit the cached full blocks of a shared prefix after the first sequence is freed, and adopt them', () => {
    const kv = new KvCacheManager(4, BS, true, ROWS);
    const a = seqOf(run(1, 10));
    prefill(kv, a);
    kv.free(a);
    expect([kv.pool.numUsed, kv.pool.numCached, kv.rowPositionsUsed, kv.usage()]).to.deep.equal([0, 2, 0, 0]);
    const b = seqOf([...run(1, 8), 50, 51, 52]);
    const hit = kv.lookup(b);
    expect(hit).to.deep.equal({ blocks: [0, 1], numTokens: 8 });
    expect(kv.allocate(b, 3, hit)).to.equal(true);
    // Free queue after a's free, tail first: 3, 2, 1, 0; the new block is its front.
    expect(b.blockTable).to.deep.equal([0, 1, 3]);
    expect([kv.pool.refCount(0), kv.pool.refCount(1), kv.pool.refCount(3), b.blocksCached]).to.deep.equal([1, 1, 1, 2]);
    expect(kv.takeRegistered()).to.deep.equal([
      { block: 0, seq: a },
      { block: 1, seq: a },
    ]);
  });

  it('should not count free cached hit blocks as free for the rest of the allocation', () => {
    const kv = new KvCacheManager(3, BS, true, ROWS);
    const a = seqOf(run(1, 9));
    prefill(kv, a);
    kv.free(a);
    // 13 tokens: 2 hit blocks + 2 new, but only block 2 is free apart from the hits.
    const long = seqOf([...run(1, 8), ...run(60, 5)]);
    const longHit = kv.lookup(long);
    expect(longHit).to.deep.equal({ blocks: [0, 1], numTokens: 8 });
    expect(kv.allocate(long, 5, longHit)).to.equal(false);
    expect([long.blockTable, kv.pool.refCount(0), kv.pool.numFree, kv.pool.numCached]).to.deep.equal([[], 0, 3, 2]);
    const short = seqOf([...run(1, 8), 70]);
    const shortHit = kv.lookup(short);
    expect(kv.allocate(short, 1, shortHit)).to.equal(true);
    expect(short.blockTable).to.deep.equal([0, 1, 2]);
  });

  it('should evict cached free blocks least recently freed first, a freed table tail first', () => {
    const kv = new KvCacheManager(3, BS, true, ROWS);
    const a = seqOf(run(1, 9));
    prefill(kv, a);
    kv.free(a); // queue: 2, 1, 0
    const other = seqOf(run(100, 4));
    expect(kv.allocate(other, 4)).to.equal(true);
    expect(other.blockTable).to.deep.equal([2]);
    expect(kv.lookup(seqOf(run(1, 9)))).to.deep.equal({ blocks: [0, 1], numTokens: 8 });
    const third = seqOf(run(200, 4));
    expect(kv.allocate(third, 4)).to.equal(true);
    expect(third.blockTable).to.deep.equal([1]);
    expect(kv.lookup(seqOf(run(1, 9)))).to.deep.equal({ blocks: [0], numTokens: 4 });
  });

  it('should leave the last cached block out of a whole-prompt hit and report it as recomputed', () => {
    const kv = new KvCacheManager(4, BS, true, ROWS);
    const a = seqOf(run(1, 8));
    prefill(kv, a);
    kv.free(a);
    expect(kv.lookup(seqOf(run(1, 8)))).to.deep.equal({ blocks: [0], numTokens: 4, recomputed: 4 });
    expect(kv.lookup(seqOf(run(1, 4)))).to.deep.equal({ blocks: [], numTokens: 0, recomputed: 4 });
    expect(kv.lookup(seqOf(run(1, 7)))).to.deep.equal({ blocks: [0], numTokens: 4 });
    expect(kv.lookup(seqOf(run(2, 8)))).to.deep.equal({ blocks: [], numTokens: 0 });
  });

  it('should neither find nor cache anything with prefix caching off', () => {
    const kv = new KvCacheManager(4, BS, false, ROWS);
    const a = seqOf(run(1, 9));
    prefill(kv, a);
    expect([kv.pool.numCached, a.blocksCached]).to.deep.equal([0, 0]);
    expect(kv.takeRegistered()).to.deep.equal([]);
    kv.free(a);
    expect(kv.lookup(seqOf(run(1, 9)))).to.deep.equal({ blocks: [], numTokens: 0 });
  });

  it('should let a sibling admitted before the run adopt the blocks registered ahead, counting shared blocks once', () => {
    const kv = new KvCacheManager(8, BS, true, ROWS);
    const a = seqOf(run(1, 8));
    expect(kv.allocate(a, 8)).to.equal(true);
    const b = seqOf(run(1, 9));
    const hit = kv.lookup(b);
    expect(hit).to.deep.equal({ blocks: [0, 1], numTokens: 8 });
    expect(kv.allocate(b, 1, hit)).to.equal(true);
    expect(b.blockTable).to.deep.equal([0, 1, 2]);
    // Rows are per sequence: a's 8 positions and b's 16.
    expect([kv.pool.refCount(0), kv.pool.numUsed, kv.rowPositionsUsed]).to.deep.equal([2, 3, 24]);
    expect(kv.usage()).to.equal((3 * 4 + 24) / (8 * 4 + 64));
    b.numComputed = 8;
    kv.free(b);
    expect([kv.pool.refCount(0), kv.pool.refCount(2), kv.pool.numUsed, kv.pool.numCached]).to.deep.equal([1, 0, 2, 2]);
  });

  it('should uncache on free the blocks registered ahead whose run never came (preempted before it), and only those', () => {
    const kv = new KvCacheManager(8, BS, true, ROWS);
    const a = seqOf(run(1, 12));
    expect(kv.allocate(a, 12)).to.equal(true);
    expect(kv.pool.numCached).to.equal(3);
    a.numComputed = 4;
    kv.free(a);
    expect(kv.pool.numCached).to.equal(1);
    expect([a.blockTable, a.blocksCached, kv.rowCapacity(a), kv.rowPositionsUsed, kv.usage()]).to.deep.equal([
      [],
      0,
      0,
      0,
      0,
    ]);
    expect(kv.lookup(seqOf(run(1, 13)))).to.deep.equal({ blocks: [0], numTokens: 4 });
  });

  it('should trim the blocks of rejected drafts back to the computed positions and keep the row', () => {
    const kv = new KvCacheManager(8, BS, true, ROWS);
    const seq = seqOf(run(1, 4));
    prefill(kv, seq);
    seq.tokens.push(5);
    // The next token plus 4 drafts: 9 positions, 3 blocks.
    expect(kv.allocate(seq, 5)).to.equal(true);
    expect(seq.blockTable).to.deep.equal([0, 1, 2]);
    expect(kv.rowCapacity(seq)).to.equal(16);
    seq.numComputed += 1 + 1; // one draft accepted
    kv.trim(seq);
    expect(seq.blockTable).to.deep.equal([0, 1]);
    expect([kv.pool.numUsed, kv.pool.refCount(2), kv.rowCapacity(seq)]).to.deep.equal([2, 0, 16]);
    kv.trim(seq);
    expect(seq.blockTable).to.deep.equal([0, 1]);
  });
});
