/**
 * The KV block pool's bookkeeping: which fixed-size blocks are in use (reference counts),
 * which hold a cached prefix (hash → block), and the free queue in eviction order. The K/V
 * values themselves live in the runner's KvStore, indexed by the same block ids.
 */

/** Where the pool reports block lifecycle events (the sampled residency tracker). */
export interface BlockEvents {
  /** The block left the free queue for a sequence (after onEvicted for its previous life). */
  onAllocated(block: number): void;
  /** A prefix-cache hit added a reference. */
  onAccessed(block: number): void;
  /** The block is taken from the free queue again: what it held is gone. */
  onEvicted(block: number): void;
}

/** Allocation, reference counting and LRU eviction of cached blocks. */
export class BlockPool {
  readonly numBlocks: number;
  private readonly refs: Int32Array;
  private readonly hashOf: (string | undefined)[];
  private readonly byHash = new Map<string, number>();
  /** Free blocks, oldest first; cached free blocks stay reusable until they reach the front. */
  private readonly freeQueue = new Map<number, true>();
  private used = 0;

  constructor(
    numBlocks: number,
    private readonly events: BlockEvents | null = null,
  ) {
    this.numBlocks = numBlocks;
    this.refs = new Int32Array(numBlocks);
    this.hashOf = new Array<string | undefined>(numBlocks).fill(undefined);
    for (let b = 0; b < numBlocks; b++) this.freeQueue.set(b, true);
  }

  /** Blocks not referenced by any sequence (cached free blocks included). */
  get numFree(): number {
    return this.freeQueue.size;
  }

  /** Blocks referenced by a sequence. */
  get numUsed(): number {
    return this.used;
  }

  /** Fraction of blocks referenced by a sequence, 0..1 (vLLM's kv_cache_usage). */
  usage(): number {
    return this.numBlocks === 0 ? 0 : this.used / this.numBlocks;
  }

  /** Takes `count` blocks from the front of the free queue (evicting their cache entries), or null. */
  allocate(count: number): number[] | null {
    if (count > this.freeQueue.size) return null;
    const out: number[] = [];
    const it = this.freeQueue.keys();
    for (let i = 0; i < count; i++) out.push(it.next().value as number);
    for (const b of out) {
      this.freeQueue.delete(b);
      const h = this.hashOf[b];
      if (h !== undefined) {
        this.byHash.delete(h);
        this.hashOf[b] = undefined;
      }
      this.refs[b] = 1;
      if (this.events !== null) {
        this.events.onEvicted(b);
        this.events.onAllocated(b);
      }
    }
    this.used += count;
    return out;
  }

  /** The cached block holding `hash`, if any. */
  lookup(hash: string): number | undefined {
    return this.byHash.get(hash);
  }

  /** Adds a reference to a (possibly free, cached) block. */
  touch(block: number): void {
    if (this.refs[block] === 0) {
      this.freeQueue.delete(block);
      this.used++;
    }
    this.refs[block]!++;
    this.events?.onAccessed(block);
  }

  /** Releases a sequence's blocks; the tail goes first in the queue so shared heads live longest. */
  free(blocks: readonly number[]): void {
    for (let i = blocks.length - 1; i >= 0; i--) {
      const b = blocks[i]!;
      if (--this.refs[b]! === 0) {
        this.used--;
        this.freeQueue.set(b, true);
      }
    }
  }

  /** Marks a full, computed block as holding `hash`; a hash already cached elsewhere is kept. */
  cache(block: number, hash: string): void {
    if (this.hashOf[block] !== undefined || this.byHash.has(hash)) return;
    this.hashOf[block] = hash;
    this.byHash.set(hash, block);
  }

  /** Drops a block's cache entry (its K/V never got computed: the run that owed them failed). */
  uncache(block: number): void {
    const h = this.hashOf[block];
    if (h === undefined) return;
    this.hashOf[block] = undefined;
    if (this.byHash.get(h) === block) this.byHash.delete(h);
  }

  /** Number of blocks currently holding a cached prefix. */
  get numCached(): number {
    return this.byHash.size;
  }

  /** Reference count of a block (for tests and assertions). */
  refCount(block: number): number {
    return this.refs[block]!;
  }
}
