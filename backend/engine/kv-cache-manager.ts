/**
 * Per-sequence KV bookkeeping over the BlockPool: block tables, prefix-cache lookups along the
 * hash chain of full blocks, slot allocation for a step, and caching of full blocks. As in vLLM,
 * the full blocks a multi-token item (prefill or chunk) will fill are registered when they are
 * allocated, before the step runs, so a sequence admitted later in the same step (an n > 1
 * sibling, an identical concurrent prompt) adopts them instead of computing them again; the
 * runner computes the owner first. Single-token items register after their run.
 */
import { BlockPool } from './block-pool.js';
import type { BlockEvents } from './block-pool.js';
import { blockHash } from './prefix-hash.js';
import { rowCapacityFor as sharedRowCapacityFor } from '../../schema/kv-capacity.js';
import type { Sequence } from './sequence.js';

/** Result of a prefix lookup: cached blocks to reuse and the tokens they cover. */
export interface PrefixHit {
  readonly blocks: readonly number[];
  readonly numTokens: number;
  /**
   * Cached tokens the hit leaves out so one is computed: the whole prompt was cached, its last
   * full block is computed again (a block's worth; 0 otherwise).
   */
  readonly recomputed?: number;
}

/** Sizing of the working rows the KV budget also pays for. */
export interface RowBudget {
  /** Positions all rows together may hold. */
  readonly numRowTokens: number;
  /** Smallest row capacity (positions); capacities are this times a power of two. */
  readonly minRow: number;
  /** Longest sequence: the largest capacity is this, rounded up to `minRow`. */
  readonly maxModelLen: number;
}

/** Row capacity (positions) for a sequence that must hold `positions`: `minRow`·2^k, capped. */
export function rowCapacityFor(positions: number, rows: RowBudget): number {
  return sharedRowCapacityFor(positions, { rowGrowStep: rows.minRow, maxModelLen: rows.maxModelLen });
}

const NO_HIT: PrefixHit = Object.freeze({ blocks: Object.freeze([]) as readonly number[], numTokens: 0 });

/** Allocates and frees a sequence's blocks; shares full blocks through the prefix cache. */
export class KvCacheManager {
  readonly pool: BlockPool;
  /** Blocks registered at allocation since the last `takeRegistered()`, with their owner. */
  private registered: { readonly block: number; readonly seq: Sequence }[] = [];
  /** Row capacity (positions) each sequence holding a row has been given. */
  private readonly rowCap = new Map<Sequence, number>();
  private rowUsed = 0;
  private readonly budgetPositions: number;

  constructor(
    numBlocks: number,
    readonly blockSize: number,
    readonly enablePrefixCaching: boolean,
    readonly rows: RowBudget,
    events: BlockEvents | null = null,
  ) {
    this.pool = new BlockPool(numBlocks, events);
    this.budgetPositions = numBlocks * blockSize + rows.numRowTokens;
  }

  /**
   * Used share of the whole KV budget, 0..1: positions in referenced blocks plus positions of
   * the rows given to sequences, over the positions the budget holds (blocks + rows).
   */
  usage(): number {
    return (this.pool.numUsed * this.blockSize + this.rowUsed) / this.budgetPositions;
  }

  /** Row capacity given to a sequence (0 when it has none). */
  rowCapacity(seq: Sequence): number {
    return this.rowCap.get(seq) ?? 0;
  }

  /** Positions of row capacity given out. */
  get rowPositionsUsed(): number {
    return this.rowUsed;
  }

  /** Blocks needed to hold `numTokens` positions. */
  blocksFor(numTokens: number): number {
    return Math.ceil(numTokens / this.blockSize);
  }

  private updateHashes(seq: Sequence): void {
    const bs = this.blockSize;
    const h = seq.blockHashes;
    while ((h.length + 1) * bs <= seq.tokens.length) {
      h.push(blockHash(h.length === 0 ? '' : h[h.length - 1]!, seq.tokens, h.length * bs, bs));
    }
  }

  /**
   * Longest run of cached full blocks at the head of the sequence's tokens; at most
   * `tokens − 1` tokens so the last one is always computed (its logits are needed).
   */
  lookup(seq: Sequence): PrefixHit {
    if (!this.enablePrefixCaching) return NO_HIT;
    this.updateHashes(seq);
    const maxBlocks = Math.floor((seq.tokens.length - 1) / this.blockSize);
    const blocks: number[] = [];
    for (let i = 0; i < maxBlocks && i < seq.blockHashes.length; i++) {
      const b = this.pool.lookup(seq.blockHashes[i]!);
      if (b === undefined) break;
      blocks.push(b);
    }
    // Every usable block hit and the next full one (holding the last token) is cached too.
    const next = blocks.length === maxBlocks ? seq.blockHashes[maxBlocks] : undefined;
    const recomputed = next !== undefined && this.pool.lookup(next) !== undefined ? this.blockSize : 0;
    if (blocks.length === 0 && recomputed === 0) return NO_HIT;
    return { blocks, numTokens: blocks.length * this.blockSize, ...(recomputed > 0 ? { recomputed } : {}) };
  }

  /**
   * Makes the block table cover `numComputed + numNew` positions, first adopting `hit` blocks
   * (when the table is empty). Returns false, changing nothing, when the pool is short.
   */
  allocate(seq: Sequence, numNew: number, hit: PrefixHit = NO_HIT): boolean {
    const haveHit = seq.blockTable.length === 0 ? hit.blocks.length : 0;
    const need =
      this.blocksFor(seq.numComputed + (haveHit > 0 ? hit.numTokens : 0) + numNew) - seq.blockTable.length - haveHit;
    // A cached hit block that is currently free is not available for fresh allocation.
    let freeHits = 0;
    for (let i = 0; i < haveHit; i++) if (this.pool.refCount(hit.blocks[i]!) === 0) freeHits++;
    if (need > 0 && need > this.pool.numFree - freeHits) return false;
    // The row must hold every position after this step; it grows by powers of two, within budget.
    const haveCap = this.rowCap.get(seq) ?? 0;
    const wantCap = rowCapacityFor(seq.numComputed + (haveHit > 0 ? hit.numTokens : 0) + numNew, this.rows);
    if (wantCap > haveCap && this.rowUsed - haveCap + wantCap > this.rows.numRowTokens) return false;
    if (wantCap > haveCap) {
      this.rowCap.set(seq, wantCap);
      this.rowUsed += wantCap - haveCap;
    }
    for (let i = 0; i < haveHit; i++) {
      this.pool.touch(hit.blocks[i]!);
      seq.blockTable.push(hit.blocks[i]!);
    }
    // Adopted blocks are cached already.
    if (haveHit > 0) seq.blocksCached = haveHit;
    if (need > 0) for (const b of this.pool.allocate(need)!) seq.blockTable.push(b);
    if (numNew > 1) this.register(seq, seq.numComputed + (haveHit > 0 ? hit.numTokens : 0) + numNew, true);
    return true;
  }

  /** Blocks registered ahead of their run since the last call (the engine uncaches them if it fails). */
  takeRegistered(): readonly { readonly block: number; readonly seq: Sequence }[] {
    const r = this.registered;
    if (r.length > 0) this.registered = [];
    return r;
  }

  /** Registers the sequence's full blocks up to position `upTo`. */
  private register(seq: Sequence, upTo: number, ahead: boolean): void {
    if (!this.enablePrefixCaching) return;
    this.updateHashes(seq);
    const full = Math.min(Math.floor(upTo / this.blockSize), seq.blockHashes.length);
    for (let i = seq.blocksCached; i < full; i++) {
      const b = seq.blockTable[i]!;
      if (ahead && this.pool.lookup(seq.blockHashes[i]!) === undefined) this.registered.push({ block: b, seq });
      this.pool.cache(b, seq.blockHashes[i]!);
    }
    if (full > seq.blocksCached) seq.blocksCached = full;
  }

  /** Registers the sequence's full, computed blocks in the prefix cache. */
  cacheComputed(seq: Sequence): void {
    this.register(seq, seq.numComputed, false);
  }

  /**
   * Gives back the blocks past `seq.numComputed` (the slots of rejected speculative drafts), so the
   * table covers exactly the computed positions, as after a plain decode. Those blocks hold no
   * cached prefix: only blocks full of real tokens are ever registered. The row keeps its
   * capacity (rows only grow; the drafts never reach past what the request may use).
   */
  trim(seq: Sequence): void {
    const keep = this.blocksFor(seq.numComputed);
    if (seq.blockTable.length <= keep) return;
    this.pool.free(seq.blockTable.slice(keep));
    seq.blockTable.length = keep;
  }

  /** Returns the sequence's blocks to the pool (cached ones stay reusable until evicted) and its row. */
  free(seq: Sequence): void {
    // Blocks registered ahead whose K/V were never computed (preempted before its run) must not
    // be found by a later lookup.
    for (let i = Math.floor(seq.numComputed / this.blockSize); i < seq.blocksCached; i++)
      this.pool.uncache(seq.blockTable[i]!);
    this.pool.free(seq.blockTable);
    const cap = this.rowCap.get(seq);
    if (cap !== undefined) {
      this.rowUsed -= cap;
      this.rowCap.delete(seq);
    }
    seq.blockTable = [];
    seq.blocksCached = 0;
  }
}
