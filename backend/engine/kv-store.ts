/**
 * The block pool's backing store: the real K/V of every block, one array per layer for K and one
 * for V, laid out [block][head][slot][headDim] so a block's head is one contiguous run. The
 * elements are the graph's: float32, or float16 as bit patterns (an fp16 export's K/V are kept
 * as they come, never converted).
 */
import type { ModelSpec } from './config.js';

/** K/V elements: float32, or half floats as their bit patterns. */
export type KvArray = Float32Array | Uint16Array;

/** Per-layer K and V storage for `numBlocks` blocks of `blockSize` positions. */
export class KvStore<A extends KvArray = Float32Array> {
  readonly k: A[];
  readonly v: A[];
  /** Floats per (block, head): blockSize × headDim. */
  readonly headStride: number;
  /** Floats per block per layer: heads × blockSize × headDim. */
  readonly blockStride: number;

  constructor(
    readonly spec: ModelSpec,
    readonly numBlocks: number,
    readonly blockSize: number,
    /** Allocates one layer's array (float32 unless given). */
    alloc: (n: number) => A = (n) => new Float32Array(n) as A,
  ) {
    this.headStride = blockSize * spec.headDim;
    this.blockStride = spec.numHeads * this.headStride;
    this.k = [];
    this.v = [];
    for (let l = 0; l < spec.numLayers; l++) {
      // fill(0) touches every page now (the allocation is lazily mapped), so the page faults
      // are paid once at load instead of inside decode steps as blocks first fill.
      this.k.push(alloc(numBlocks * this.blockStride).fill(0) as A);
      this.v.push(alloc(numBlocks * this.blockStride).fill(0) as A);
    }
  }

  /** Offset of (block, head, slot) in a layer array. */
  offset(block: number, head: number, slot: number): number {
    return block * this.blockStride + head * this.headStride + slot * this.spec.headDim;
  }
}
