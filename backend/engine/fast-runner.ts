/**
 * Runner for the fast KV layout: past K/V are read-only inputs [B,H,P,Dh], only the new tokens'
 * K/V come out. Every running sequence owns a persistent row of one preallocated batch buffer
 * per layer ([Bcap,H,Pcap,Dh]); a decode step passes a prefix view of that buffer (no copy)
 * and writes each new token's K/V into its row; a KV block is copied from the row into the
 * block store when it fills. Rows are packed before each run: released rows go to newcomers,
 * or the last rows move into them. Capacities grow in steps, so no KV-sized buffer is
 * allocated per step.
 */
import { performance } from 'node:perf_hooks';
import type { OrtSession, OrtTensorInput } from '../onnx/ort.js';
import { tensorF32, tensorI64 } from '../onnx/ort.js';
import type { ModelSpec } from './config.js';
import type { KvStore } from './kv-store.js';
import type { ModelRunner, RunItem, RunResult } from './runner.js';

/** `rowSeq` entry of a released row not yet reused or closed. */
const HOLE = -1;

/** int64 inputs are written as two int32 words, low word first on little-endian hosts. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Value of a masked `attn_bias` entry. */
const MASK = -1e9;

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** Sizing knobs of the packed batch buffer. */
export interface FastRunnerOptions {
  /** Row capacity grows (and shrinks) in multiples of this many positions. */
  readonly rowGrowStep: number;
  /** Longest sequence; caps the row capacity. */
  readonly maxModelLen: number;
}

/** Input/output names of the fast layout. */
export const FAST_INPUTS = { ids: 'input_ids', pos: 'position_ids', bias: 'attn_bias' } as const;

/** The fast-layout runner. */
export class FastRunner implements ModelRunner {
  private readonly H: number;
  private readonly Dh: number;
  private readonly L: number;
  private bcap = 0;
  private pcap = 0;
  private bufK: Float32Array[] = [];
  private bufV: Float32Array[] = [];
  /**
   * A decode step's new K (or V) output is copied here first, so each head's Dh floats can be
   * copied into its row through a `subarray` view made once (`headViews[b * H + h]`) instead of
   * one per head per row per step (1024 view allocations a step at batch 32, 4 layers, 4 heads).
   */
  private stage = new Float32Array(0);
  private headViews: Float32Array[] = [];
  private readonly rowOf = new Map<number, number>();
  private rowSeq: number[] = [];
  private rowLen: number[] = [];
  /** Decode inputs, one entry per row; written through int32 views (no BigInt per token). */
  private ids = new BigInt64Array(0);
  private pos = new BigInt64Array(0);
  private ids32 = new Int32Array(0);
  private pos32 = new Int32Array(0);
  /**
   * Decode `attn_bias` [bcap, 1, 1, pcap + 1], kept across steps: row b has its first
   * `biasOpen[b]` past slots at 0, the rest masked, and its own slot (the last) at 0. A step
   * rewrites only the slots whose state changes (one per decoding row).
   */
  private dbias = new Float32Array(0);
  private biasOpen = new Int32Array(0);
  private biasWant = new Int32Array(0);
  /** Prefill `attn_bias` scratch. */
  private bias = new Float32Array(0);
  /** Decode feeds for `decodeFeedsB` rows over the current buffers (views only; rebuilt on resize). */
  private decodeFeeds: Record<string, OrtTensorInput> | null = null;
  private decodeFeedsB = -1;
  private readonly pastKeyNames: string[];
  private readonly pastValueNames: string[];
  private readonly newKeyNames: string[];
  private readonly newValueNames: string[];
  private sessionMs = 0;
  /** Newcomers of the current run whose row is still to be filled from blocks. */
  private readonly pendingLoad = new Set<number>();

  constructor(
    private readonly session: OrtSession,
    readonly spec: ModelSpec,
    /** Block store to write every new K/V into (null when nothing reads blocks back). */
    private readonly store: KvStore | null,
    private readonly opts: FastRunnerOptions,
  ) {
    this.H = spec.numHeads;
    this.Dh = spec.headDim;
    this.L = spec.numLayers;
    const r = (f: (l: number) => string): string[] => Array.from({ length: this.L }, (_, l) => f(l));
    this.pastKeyNames = r((l) => `past_key.${l}`);
    this.pastValueNames = r((l) => `past_value.${l}`);
    this.newKeyNames = r((l) => `new_key.${l}`);
    this.newValueNames = r((l) => `new_value.${l}`);
    const missing = [FAST_INPUTS.ids, FAST_INPUTS.pos, FAST_INPUTS.bias, ...this.pastKeyNames, ...this.pastValueNames].filter((n) => !session.inputNames.includes(n));
    if (missing.length > 0) throw new Error(`model is not in the fast KV layout: missing inputs ${missing.join(', ')}`);
    this.resize(8, opts.rowGrowStep);
  }

  /** Floats per row per layer. */
  private get rowStride(): number {
    return this.H * this.pcap * this.Dh;
  }

  /** Current capacities (rows, positions per row), for tests and the bench. */
  get capacity(): { readonly rows: number; readonly positions: number } {
    return { rows: this.bcap, positions: this.pcap };
  }

  /** Reallocates the batch buffers to [bcap,H,pcap,Dh], copying every live row's valid slots. */
  private resize(bcap: number, pcap: number): void {
    const H = this.H;
    const Dh = this.Dh;
    const samePcap = pcap === this.pcap;
    for (let l = 0; l < this.L; l++) {
      const nk = new Float32Array(bcap * H * pcap * Dh);
      const nv = new Float32Array(bcap * H * pcap * Dh);
      const ok = this.bufK[l];
      const ov = this.bufV[l];
      if (ok !== undefined && ov !== undefined) {
        const rows = this.rowSeq.length;
        if (samePcap) {
          // Rows are packed at the front: one contiguous copy.
          nk.set(ok.subarray(0, rows * H * pcap * Dh));
          nv.set(ov.subarray(0, rows * H * pcap * Dh));
        } else {
          for (let b = 0; b < rows; b++) {
            const n = Math.min(this.rowLen[b]!, pcap) * Dh;
            for (let h = 0; h < H; h++) {
              const src = (b * H + h) * this.pcap * Dh;
              const dst = (b * H + h) * pcap * Dh;
              nk.set(ok.subarray(src, src + n), dst);
              nv.set(ov.subarray(src, src + n), dst);
            }
          }
        }
      }
      this.bufK[l] = nk;
      this.bufV[l] = nv;
    }
    this.bcap = bcap;
    this.pcap = pcap;
    this.ids = new BigInt64Array(bcap);
    this.pos = new BigInt64Array(bcap);
    this.ids32 = new Int32Array(this.ids.buffer);
    this.pos32 = new Int32Array(this.pos.buffer);
    const S = pcap + 1;
    this.dbias = new Float32Array(bcap * S).fill(MASK);
    for (let b = 0; b < bcap; b++) this.dbias[b * S + pcap] = 0;
    this.biasOpen = new Int32Array(bcap);
    this.biasWant = new Int32Array(bcap);
    this.bias = new Float32Array(pcap * (2 * pcap));
    this.decodeFeeds = null;
    if (this.headViews.length !== bcap * H) {
      const stage = new Float32Array(bcap * H * Dh);
      this.stage = stage;
      this.headViews = Array.from({ length: bcap * H }, (_, i) => stage.subarray(i * Dh, (i + 1) * Dh));
    }
  }

  private roundUp(n: number): number {
    const s = this.opts.rowGrowStep;
    return Math.max(s, Math.ceil(n / s) * s);
  }

  async run(items: readonly RunItem[]): Promise<RunResult[]> {
    // Rows for newcomers (released rows first), then capacities.
    let reserve = 0;
    const fresh: RunItem[] = [];
    for (const it of items) {
      reserve = Math.max(reserve, Math.min(it.reserve, this.opts.maxModelLen));
      if (!this.rowOf.has(it.seqId)) fresh.push(it);
    }
    const inHoles = this.fillHoles(fresh);
    let needP = 0;
    for (let b = 0; b < this.rowLen.length; b++) needP = Math.max(needP, this.rowLen[b]!);
    for (const it of items) needP = Math.max(needP, it.start + it.count);
    const rowsNeeded = this.rowSeq.length + fresh.length - inHoles;
    const tight = this.roundUp(needP);
    const growP = tight > this.pcap;
    if (rowsNeeded > this.bcap || growP || tight * 2 < this.pcap) {
      const bcap = rowsNeeded > this.bcap ? Math.max(rowsNeeded, this.bcap * 2) : this.bcap;
      // A re-pack costs milliseconds: when growing, look ahead by half the length (≥ one step),
      // but never past what the scheduled sequences can still reach (prompt + max_tokens).
      const ahead = Math.max(this.opts.rowGrowStep, Math.floor(needP / 2));
      const pcap = growP ? Math.max(tight, Math.min(this.roundUp(needP + ahead), this.roundUp(reserve))) : tight * 2 < this.pcap ? tight : this.pcap;
      this.resize(bcap, pcap);
    }
    for (let f = inHoles; f < fresh.length; f++) {
      const b = this.rowSeq.length;
      this.rowOf.set(fresh[f]!.seqId, b);
      this.rowSeq.push(fresh[f]!.seqId);
      this.rowLen.push(0);
    }
    // A newcomer with a prefix hit gets its row from blocks just before its own run: the blocks
    // may be filled by an earlier item of this very step (prefix sharing within a step).
    const pending = this.pendingLoad;
    pending.clear();
    for (const it of fresh) {
      const b = this.rowOf.get(it.seqId)!;
      if (it.start > 0) pending.add(it.seqId);
      this.rowLen[b] = it.start;
    }
    const out: RunResult[] = new Array<RunResult>(items.length).fill(null);
    // Multi-token items (prefills, chunks) run alone, in plan order, so an owner of shared blocks
    // runs before the items that adopt them; then single-token items share one batched run over
    // the row prefix. Each run's failure fails only the items it carried.
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (it.count <= 1) continue;
      try {
        this.loadPending(it);
        out[i] = await this.runPrefill(it);
      } catch (err) {
        out[i] = asError(err);
      }
    }
    let maxRow = -1;
    for (const it of items) if (it.count === 1) maxRow = Math.max(maxRow, this.rowOf.get(it.seqId)!);
    if (maxRow >= 0) {
      try {
        for (const it of items) if (it.count === 1) this.loadPending(it);
        await this.runDecode(items, maxRow + 1, out);
      } catch (err) {
        const e = asError(err);
        for (let i = 0; i < items.length; i++) if (items[i]!.count === 1) out[i] = e;
      }
    }
    return out;
  }

  private loadPending(it: RunItem): void {
    if (!this.pendingLoad.delete(it.seqId)) return;
    this.loadFromBlocks(this.rowOf.get(it.seqId)!, it);
  }

  private loadFromBlocks(b: number, it: RunItem): void {
    const store = this.store;
    if (store === null) throw new Error('prefix hit without a block store');
    const bs = store.blockSize;
    const Dh = this.Dh;
    for (let i = 0; i * bs < it.start; i++) {
      const blk = it.blockTable[i]!;
      const n = Math.min(bs, it.start - i * bs) * Dh;
      for (let l = 0; l < this.L; l++) {
        for (let h = 0; h < this.H; h++) {
          const src = store.offset(blk, h, 0);
          const dst = ((b * this.H + h) * this.pcap + i * bs) * Dh;
          this.bufK[l]!.set(store.k[l]!.subarray(src, src + n), dst);
          this.bufV[l]!.set(store.v[l]!.subarray(src, src + n), dst);
        }
      }
    }
  }

  private async timedRun(feeds: Record<string, OrtTensorInput>) {
    const t0 = performance.now();
    const r = await this.session.run(feeds);
    this.sessionMs += performance.now() - t0;
    return r;
  }

  private async runDecode(items: readonly RunItem[], B: number, out: RunResult[]): Promise<void> {
    const P = this.pcap;
    const S = P + 1;
    // Rows without a token this step get PAD at slot 0, attend only to themselves, and are not written back.
    const pad = this.spec.padId;
    for (let b = 0; b < B; b++) {
      this.setI64(this.ids, this.ids32, b, pad);
      this.setI64(this.pos, this.pos32, b, 0);
    }
    const want = this.biasWant;
    want.fill(0, 0, B);
    const active: number[] = [];
    const rows: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (it.count !== 1) continue;
      const b = this.rowOf.get(it.seqId)!;
      this.setI64(this.ids, this.ids32, b, it.tokens[it.start]!);
      this.setI64(this.pos, this.pos32, b, it.start);
      want[b] = it.start;
      active.push(i);
      rows.push(b);
    }
    // Bias rows: each active row sees its past up to its slot, every other row only itself.
    const bias = this.dbias;
    const open = this.biasOpen;
    for (let b = 0; b < B; b++) {
      const w = want[b]!;
      const have = open[b]!;
      if (w > have) bias.fill(0, b * S + have, b * S + w);
      else if (w < have) bias.fill(MASK, b * S + w, b * S + have);
      open[b] = w;
    }
    let feeds = this.decodeFeeds;
    if (feeds === null || this.decodeFeedsB !== B) {
      feeds = {
        [FAST_INPUTS.ids]: tensorI64(this.ids.subarray(0, B), [B, 1]),
        [FAST_INPUTS.pos]: tensorI64(this.pos.subarray(0, B), [B, 1]),
        [FAST_INPUTS.bias]: tensorF32(bias.subarray(0, B * S), [B, 1, 1, S]),
      };
      const n = B * this.rowStride;
      for (let l = 0; l < this.L; l++) {
        feeds[this.pastKeyNames[l]!] = tensorF32(this.bufK[l]!.subarray(0, n), [B, this.H, P, this.Dh]);
        feeds[this.pastValueNames[l]!] = tensorF32(this.bufV[l]!.subarray(0, n), [B, this.H, P, this.Dh]);
      }
      this.decodeFeeds = feeds;
      this.decodeFeedsB = B;
    }
    const r = await this.timedRun(feeds);
    const logits = r.logits!.data as Float32Array;
    const V = this.spec.vocabSize;
    for (let l = 0; l < this.L; l++) {
      this.writeDecoded(this.bufK[l]!, r[this.newKeyNames[l]!]!.data as Float32Array, items, active, rows);
      this.writeDecoded(this.bufV[l]!, r[this.newValueNames[l]!]!.data as Float32Array, items, active, rows);
    }
    for (let a = 0; a < active.length; a++) {
      const i = active[a]!;
      const it = items[i]!;
      const b = rows[a]!;
      this.rowLen[b] = it.start + 1;
      this.storeFilledBlocks(b, it, it.start, it.start + 1);
      if (it.wantLogits) out[i] = logits.subarray(b * V, (b + 1) * V);
    }
  }

  /** Writes a small non-negative int64: two int32 words on little-endian hosts, else a BigInt. */
  private setI64(a: BigInt64Array, w: Int32Array, i: number, v: number): void {
    if (LITTLE_ENDIAN) {
      w[2 * i] = v;
      w[2 * i + 1] = 0;
    } else a[i] = BigInt(v);
  }

  private async runPrefill(it: RunItem): Promise<Float32Array | null> {
    const b = this.rowOf.get(it.seqId)!;
    const P = this.pcap;
    const T = it.count;
    const S = P + T;
    const ids = new BigInt64Array(T);
    const pos = new BigInt64Array(T);
    const bias = this.bias.subarray(0, T * S);
    bias.fill(MASK);
    for (let t = 0; t < T; t++) {
      ids[t] = BigInt(it.tokens[it.start + t]!);
      pos[t] = BigInt(it.start + t);
      bias.fill(0, t * S, t * S + it.start);
      bias.fill(0, t * S + P, t * S + P + t + 1);
    }
    const feeds: Record<string, OrtTensorInput> = {
      [FAST_INPUTS.ids]: tensorI64(ids, [1, T]),
      [FAST_INPUTS.pos]: tensorI64(pos, [1, T]),
      [FAST_INPUTS.bias]: tensorF32(bias, [1, 1, T, S]),
    };
    const rs = this.rowStride;
    for (let l = 0; l < this.L; l++) {
      feeds[this.pastKeyNames[l]!] = tensorF32(this.bufK[l]!.subarray(b * rs, (b + 1) * rs), [1, this.H, P, this.Dh]);
      feeds[this.pastValueNames[l]!] = tensorF32(this.bufV[l]!.subarray(b * rs, (b + 1) * rs), [1, this.H, P, this.Dh]);
    }
    const r = await this.timedRun(feeds);
    for (let l = 0; l < this.L; l++) {
      this.writePrefilled(this.bufK[l]!, r[this.newKeyNames[l]!]!.data as Float32Array, T, it.start, b);
      this.writePrefilled(this.bufV[l]!, r[this.newValueNames[l]!]!.data as Float32Array, T, it.start, b);
    }
    this.rowLen[b] = it.start + T;
    this.storeFilledBlocks(b, it, it.start, it.start + T);
    return it.wantLogits ? (r.logits!.data as Float32Array).subarray(0, this.spec.vocabSize) : null;
  }

  /**
   * Copies a decode step's new K or V ([B,H,1,Dh]) into the active rows at each one's slot.
   * The destination slots are cold (one per head per row, each in a different page), so this is
   * the costliest JS of a step; `set()` (a memcpy) beats an element loop here (measured), and
   * going through the stage saves a view allocation per copy.
   */
  private writeDecoded(buf: Float32Array, src: Float32Array, items: readonly RunItem[], active: readonly number[], rows: readonly number[]): void {
    const H = this.H;
    const Dh = this.Dh;
    const pcap = this.pcap;
    const views = this.headViews;
    this.stage.set(src);
    for (let a = 0; a < active.length; a++) {
      const b = rows[a]!;
      const start = items[active[a]!]!.start;
      for (let h = 0; h < H; h++) buf.set(views[b * H + h]!, ((b * H + h) * pcap + start) * Dh);
    }
  }

  /** Copies a B=1 run's new K or V ([1,H,T,Dh]) into row `b` at slots `[start, start+T)`. */
  private writePrefilled(buf: Float32Array, src: Float32Array, T: number, start: number, b: number): void {
    const H = this.H;
    const Dh = this.Dh;
    const n = T * Dh;
    for (let h = 0; h < H; h++) buf.set(src.subarray(h * n, (h + 1) * n), ((b * H + h) * this.pcap + start) * Dh);
  }

  /**
   * Copies the blocks of row `b` that became full with positions `[start, end)` into the block
   * store, one contiguous run per (layer, K/V, head). Only full blocks are ever read back (a
   * prefix hit adopts full cached blocks), and a block is registered in the prefix cache in the
   * step that fills it, so writing it once, when it fills, is enough.
   */
  private storeFilledBlocks(b: number, it: RunItem, start: number, end: number): void {
    const store = this.store;
    if (store === null) return;
    const bs = store.blockSize;
    const Dh = this.Dh;
    const n = bs * Dh;
    for (let i = Math.floor(start / bs); (i + 1) * bs <= end; i++) {
      const blk = it.blockTable[i]!;
      for (let l = 0; l < this.L; l++) {
        const k = this.bufK[l]!;
        const v = this.bufV[l]!;
        for (let h = 0; h < this.H; h++) {
          const src = ((b * this.H + h) * this.pcap + i * bs) * Dh;
          const dst = store.offset(blk, h, 0);
          store.k[l]!.set(k.subarray(src, src + n), dst);
          store.v[l]!.set(v.subarray(src, src + n), dst);
        }
      }
    }
  }

  /**
   * Frees a sequence's row. Nothing moves here: the row becomes a hole (trailing holes are
   * dropped at once), and the next `run()` gives holes to newcomers first and closes the rest by
   * moving the last rows in. So when many sequences finish in one step, only rows that survive
   * are moved (none when the batch ends together) instead of one move per release.
   */
  release(seqId: number): void {
    const b = this.rowOf.get(seqId);
    if (b === undefined) return;
    this.rowOf.delete(seqId);
    this.rowSeq[b] = HOLE;
    this.rowLen[b] = 0;
    this.dropTrailingHoles();
  }

  private dropTrailingHoles(): void {
    while (this.rowSeq.length > 0 && this.rowSeq[this.rowSeq.length - 1] === HOLE) {
      this.rowSeq.pop();
      this.rowLen.pop();
    }
  }

  /**
   * Fills every hole: with a newcomer from `fresh` (taken from the front, its row index
   * recorded in `rowOf`) while there are any, else by moving the last row into it.
   * Returns how many newcomers got a hole.
   */
  private fillHoles(fresh: readonly RunItem[]): number {
    let taken = 0;
    for (let b = 0; b < this.rowSeq.length; b++) {
      if (this.rowSeq[b] !== HOLE) continue;
      if (taken < fresh.length) {
        const id = fresh[taken++]!.seqId;
        this.rowSeq[b] = id;
        this.rowOf.set(id, b);
        continue;
      }
      // The last row is never a hole (trailing holes are dropped), nor a newcomer placed above.
      const last = this.rowSeq.length - 1;
      this.moveRow(last, b);
      this.rowSeq.pop();
      this.rowLen.pop();
      this.dropTrailingHoles();
    }
    return taken;
  }

  /** Copies row `from`'s valid slots to row `to` and re-points its sequence there. */
  private moveRow(from: number, to: number): void {
    const rs = this.rowStride;
    const P = this.pcap;
    const Dh = this.Dh;
    const n = Math.min(this.rowLen[from]!, P);
    for (let l = 0; l < this.L; l++) {
      for (const buf of [this.bufK[l]!, this.bufV[l]!]) {
        if (n * 2 >= P) buf.copyWithin(to * rs, from * rs, (from + 1) * rs);
        else for (let h = 0; h < this.H; h++) buf.copyWithin((to * this.H + h) * P * Dh, (from * this.H + h) * P * Dh, ((from * this.H + h) * P + n) * Dh);
      }
    }
    const moved = this.rowSeq[from]!;
    this.rowSeq[to] = moved;
    this.rowLen[to] = this.rowLen[from]!;
    this.rowOf.set(moved, to);
  }

  takeSessionMs(): number {
    const ms = this.sessionMs;
    this.sessionMs = 0;
    return ms;
  }

  close(): Promise<void> {
    return this.session.release();
  }
}
