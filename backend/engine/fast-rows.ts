/**
 * The copies of the fast-layout runner (fast-runner.ts) between its row groups' buffers, a run's
 * new K/V and the block store. Rows are `[bcap, H, pcap, Dh]` per layer; a block's head is one
 * contiguous run in the store.
 */
import type { KvStore } from './kv-store.js';
import type { RowGroup } from './row-group.js';
import type { RunItem } from './runner.js';

/** Fills row `b` of `g` with positions `[0, it.start)` from the blocks of a prefix hit. */
export function loadFromBlocks(store: KvStore | null, g: RowGroup, b: number, it: RunItem): void {
  if (store === null) throw new Error('prefix hit without a block store');
  const { H, Dh, L } = g;
  const bs = store.blockSize;
  for (let i = 0; i * bs < it.start; i++) {
    const blk = it.blockTable[i]!;
    const n = Math.min(bs, it.start - i * bs) * Dh;
    for (let l = 0; l < L; l++) {
      for (let h = 0; h < H; h++) {
        const src = store.offset(blk, h, 0);
        const dst = ((b * H + h) * g.pcap + i * bs) * Dh;
        g.bufK[l]!.set(store.k[l]!.subarray(src, src + n), dst);
        g.bufV[l]!.set(store.v[l]!.subarray(src, src + n), dst);
      }
    }
  }
}

/**
 * Copies a decode step's new K or V ([B,H,1,Dh]) into the active rows at each one's slot.
 * The destination slots are cold (one per head per row, each in a different page), so this is
 * the costliest JS of a step; `set()` (a memcpy) beats an element loop here (measured), and
 * going through the stage saves a view allocation per copy.
 */
export function writeDecoded(
  g: RowGroup,
  buf: Float32Array,
  src: Float32Array,
  items: readonly RunItem[],
  active: readonly number[],
  rows: readonly number[],
): void {
  const { H, Dh } = g;
  const pcap = g.pcap;
  const views = g.headViews;
  g.stage.set(src);
  for (let a = 0; a < active.length; a++) {
    const b = rows[a]!;
    const start = items[active[a]!]!.start;
    for (let h = 0; h < H; h++) buf.set(views[b * H + h]!, ((b * H + h) * pcap + start) * Dh);
  }
}

/** Copies a B=1 run's new K or V ([1,H,T,Dh]) into row `b` at slots `[start, start+T)`. */
export function writePrefilled(
  g: RowGroup,
  buf: Float32Array,
  src: Float32Array,
  T: number,
  start: number,
  b: number,
): void {
  const { H, Dh } = g;
  const n = T * Dh;
  for (let h = 0; h < H; h++) buf.set(src.subarray(h * n, (h + 1) * n), ((b * H + h) * g.pcap + start) * Dh);
}

/**
 * Copies the blocks of row `b` that became full with positions `[start, end)` into the block
 * store, one contiguous run per (layer, K/V, head). Only full blocks are ever read back (a
 * prefix hit adopts full cached blocks), so writing each once, when it fills, is enough.
 */
export function storeFilledBlocks(
  store: KvStore | null,
  g: RowGroup,
  b: number,
  it: RunItem,
  start: number,
  end: number,
): void {
  if (store === null) return;
  const { H, Dh, L } = g;
  const bs = store.blockSize;
  const n = bs * Dh;
  for (let i = Math.floor(start / bs); (i + 1) * bs <= end; i++) {
    const blk = it.blockTable[i]!;
    for (let l = 0; l < L; l++) {
      const k = g.bufK[l]!;
      const v = g.bufV[l]!;
      for (let h = 0; h < H; h++) {
        const src = ((b * H + h) * g.pcap + i * bs) * Dh;
        const dst = store.offset(blk, h, 0);
        store.k[l]!.set(k.subarray(src, src + n), dst);
        store.v[l]!.set(v.subarray(src, src + n), dst);
      }
    }
  }
}
