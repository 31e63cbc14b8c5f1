/**
 * The K/V rows of the usual-layout runner (hf-runner.ts) and the copies between them and the
 * block store. Rows are packed `[rows, H, slots, Dh]` per layer (H = the graph's K/V heads, fewer
 * than its attention heads under grouped-query attention), left-padded: row r's real slots are
 * `[pad[r], slots)`. Elements are the graph's own (float32, or float16 bit patterns).
 */
import type { ModelSpec } from './config.js';
import type { HfFloat } from './hf-io.js';
import { kvAlloc } from './hf-io.js';
import type { KvArray, KvStore } from './kv-store.js';

/** K/V of some rows: `[rows, H, slots, Dh]` per layer; row r's real slots start at `pad[r]`. */
export interface KvRows {
  keys: KvArray[];
  values: KvArray[];
  slots: number;
  pad: number[];
}

/** Per-layer K and V buffers of some capacity (a batch's current or next ones). */
export interface KvBuffers {
  readonly k: KvArray[];
  readonly v: KvArray[];
}

/** Length (real slots) of row `r` of `rows`. */
export function lenOf(rows: KvRows, r: number): number {
  return rows.slots - rows.pad[r]!;
}

/** Row copies for one model's dimensions and element type. */
export class HfRowCopier {
  private readonly H: number;
  private readonly Dh: number;
  private readonly L: number;

  constructor(
    spec: ModelSpec,
    private readonly type: HfFloat,
  ) {
    this.H = spec.numHeads;
    this.Dh = spec.headDim;
    this.L = spec.numLayers;
  }

  /** Elements of `rows` rows of `slots` slots, one layer. */
  size(rows: number, slots: number): number {
    return rows * this.H * slots * this.Dh;
  }

  /** Buffers holding at least `n` elements per layer: `reuse` when it does, else new ones. */
  buffers(n: number, reuse?: KvBuffers | null): KvBuffers {
    if (reuse != null && reuse.k[0]!.length >= n) return reuse;
    const k: KvArray[] = [];
    const v: KvArray[] = [];
    for (let l = 0; l < this.L; l++) {
      k.push(kvAlloc(this.type, n));
      v.push(kvAlloc(this.type, n));
    }
    return { k, v };
  }

  /**
   * Left-padded rows of `slots` slots holding the given source rows' real slots, written into
   * `into` (which holds at least that many elements) or into new arrays.
   */
  copyRows(src: readonly { from: KvRows; row: number }[], slots: number, into?: KvBuffers): KvRows {
    const { H, Dh } = this;
    const B = src.length;
    const n = this.size(B, slots);
    const bufs = into ?? this.buffers(n);
    const pad = src.map((s) => slots - lenOf(s.from, s.row));
    const keys: KvArray[] = [];
    const values: KvArray[] = [];
    for (let l = 0; l < this.L; l++) {
      const k = bufs.k[l]!.subarray(0, n);
      const v = bufs.v[l]!.subarray(0, n);
      for (let b = 0; b < B; b++) {
        const { from, row } = src[b]!;
        const m = lenOf(from, row) * Dh;
        // Padding slots are masked out, but stale values there could be NaN: zero them.
        for (let h = 0; h < H; h++) {
          const s = ((row * H + h) * from.slots + from.pad[row]!) * Dh;
          const d = ((b * H + h) * slots + pad[b]!) * Dh;
          k.fill(0, d - pad[b]! * Dh, d);
          v.fill(0, d - pad[b]! * Dh, d);
          k.set(from.keys[l]!.subarray(s, s + m), d);
          v.set(from.values[l]!.subarray(s, s + m), d);
        }
      }
      keys.push(k);
      values.push(v);
    }
    return { keys, values, slots, pad };
  }

  /** One row filled from the block store: positions `[0, len)` of a prefix hit. */
  fromBlocks(store: KvStore<KvArray> | null, table: readonly number[], len: number): KvRows {
    const { H, Dh } = this;
    const c: KvRows = { keys: [], values: [], slots: len, pad: [0] };
    for (let l = 0; l < this.L; l++) {
      c.keys.push(kvAlloc(this.type, H * len * Dh));
      c.values.push(kvAlloc(this.type, H * len * Dh));
    }
    if (len === 0) return c;
    if (store === null) throw new Error('prefix hit without a block store');
    const bs = store.blockSize;
    for (let i = 0; i * bs < len; i++) {
      const n = Math.min(bs, len - i * bs) * Dh;
      for (let l = 0; l < this.L; l++) {
        for (let h = 0; h < H; h++) {
          const src = store.offset(table[i]!, h, 0);
          const dst = (h * len + i * bs) * Dh;
          c.keys[l]!.set(store.k[l]!.subarray(src, src + n), dst);
          c.values[l]!.set(store.v[l]!.subarray(src, src + n), dst);
        }
      }
    }
    return c;
  }

  /**
   * Copies the blocks of row `r` that became full with positions `[start, end)` into the store,
   * whole: one contiguous run per (layer, K/V, head). Only full blocks are ever read back, and the
   * engine registers a block in the prefix cache in the step that fills it.
   */
  storeFilled(
    store: KvStore<KvArray> | null,
    rows: KvRows,
    r: number,
    start: number,
    end: number,
    table: readonly number[],
  ): void {
    if (store === null) return;
    const { H, Dh } = this;
    const bs = store.blockSize;
    const n = bs * Dh;
    for (let i = Math.floor(start / bs); (i + 1) * bs <= end; i++) {
      const blk = table[i]!;
      for (let l = 0; l < this.L; l++) {
        for (let h = 0; h < H; h++) {
          const src = ((r * H + h) * rows.slots + rows.pad[r]! + i * bs) * Dh;
          const dst = store.offset(blk, h, 0);
          store.k[l]!.set(rows.keys[l]!.subarray(src, src + n), dst);
          store.v[l]!.set(rows.values[l]!.subarray(src, src + n), dst);
        }
      }
    }
  }
}
