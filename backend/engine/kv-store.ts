/**
 * The block pool's backing store: the real K/V of every block, one Float32Array per layer for K
 * and one for V, laid out [block][head][slot][headDim] so a block's head is one contiguous run.
 */
import type { ModelSpec } from './config.js';

/** Per-layer K and V storage for `numBlocks` blocks of `blockSize` positions. */
export class KvStore {
  readonly k: Float32Array[];
  readonly v: Float32Array[];
  /** Floats per (block, head): blockSize × headDim. */
  readonly headStride: number;
  /** Floats per block per layer: heads × blockSize × headDim. */
  readonly blockStride: number;

  constructor(
    readonly spec: ModelSpec,
    readonly numBlocks: number,
    readonly blockSize: number,
  ) {
    this.headStride = blockSize * spec.headDim;
    this.blockStride = spec.numHeads * this.headStride;
    this.k = [];
    this.v = [];
    for (let l = 0; l < spec.numLayers; l++) {
      // fill(0) touches every page now (the allocation is lazily mapped), so the page faults
      // are paid once at load instead of inside decode steps as blocks first fill.
      this.k.push(new Float32Array(numBlocks * this.blockStride).fill(0));
      this.v.push(new Float32Array(numBlocks * this.blockStride).fill(0));
    }
  }

  /** Offset of (block, head, slot) in a layer array. */
  offset(block: number, head: number, slot: number): number {
    return block * this.blockStride + head * this.headStride + slot * this.spec.headDim;
  }
}
