/**
 * One group of working rows of the fast runner: every row has the same capacity `pcap`, packed
 * at the front of one buffer per layer ([bcap, H, pcap, Dh]), so a decode over the group passes
 * a prefix view (no copy). Rows are grouped by capacity (powers of two) so a short sequence never
 * attends over the slots a long one needs. Released rows become holes that newcomers take first;
 * `compact()` closes the rest by moving the last rows in.
 */
import type { ModelSpec } from './config.js';

/** `rowSeq` entry of a released row not yet reused or closed. */
export const HOLE = -1;

/** Value of a masked `attn_bias` entry. */
export const MASK = -1e9;

/** Rows of one capacity and their decode scratch. */
export class RowGroup {
  readonly H: number;
  readonly Dh: number;
  readonly L: number;
  bcap = 0;
  bufK: Float32Array[] = [];
  bufV: Float32Array[] = [];
  readonly rowOf = new Map<number, number>();
  rowSeq: number[] = [];
  rowLen: number[] = [];
  /** Decode inputs, one entry per row (int64 written as int32 words). */
  ids = new BigInt64Array(0);
  pos = new BigInt64Array(0);
  ids32 = new Int32Array(0);
  pos32 = new Int32Array(0);
  /** Decode `attn_bias` [bcap, 1, 1, pcap + 1], kept across steps (see FastRunner.runDecode). */
  dbias = new Float32Array(0);
  biasOpen = new Int32Array(0);
  biasWant = new Int32Array(0);
  /** A decode's new K/V is copied here first so per-head views are made once (`headViews`). */
  stage = new Float32Array(0);
  headViews: Float32Array[] = [];
  /** Decode feeds for `decodeFeedsB` rows over the current buffers (rebuilt on resize). */
  decodeFeeds: Record<string, unknown> | null = null;
  decodeFeedsB = -1;

  constructor(
    spec: ModelSpec,
    readonly pcap: number,
  ) {
    this.H = spec.numHeads;
    this.Dh = spec.headDim;
    this.L = spec.numLayers;
  }

  /** Floats per row per layer. */
  get rowStride(): number {
    return this.H * this.pcap * this.Dh;
  }

  /** Live rows (holes included until compacted). */
  get rows(): number {
    return this.rowSeq.length;
  }

  /** Positions this group's buffers hold (what it costs against the budget). */
  get positions(): number {
    return this.bcap * this.pcap;
  }

  /** Reallocates to `bcap` rows (≥ rows), copying the packed rows in one piece per layer. */
  resize(bcap: number): void {
    const n = this.rowSeq.length * this.rowStride;
    for (let l = 0; l < this.L; l++) {
      const nk = new Float32Array(bcap * this.rowStride);
      const nv = new Float32Array(bcap * this.rowStride);
      const ok = this.bufK[l];
      const ov = this.bufV[l];
      if (ok !== undefined && ov !== undefined && n > 0) {
        nk.set(ok.subarray(0, n));
        nv.set(ov.subarray(0, n));
      }
      this.bufK[l] = nk;
      this.bufV[l] = nv;
    }
    this.bcap = bcap;
    this.ids = new BigInt64Array(bcap);
    this.pos = new BigInt64Array(bcap);
    this.ids32 = new Int32Array(this.ids.buffer);
    this.pos32 = new Int32Array(this.pos.buffer);
    const S = this.pcap + 1;
    this.dbias = new Float32Array(bcap * S).fill(MASK);
    for (let b = 0; b < bcap; b++) this.dbias[b * S + this.pcap] = 0;
    this.biasOpen = new Int32Array(bcap);
    this.biasWant = new Int32Array(bcap);
    this.decodeFeeds = null;
    const stage = new Float32Array(bcap * this.H * this.Dh);
    this.stage = stage;
    this.headViews = Array.from({ length: bcap * this.H }, (_, i) => stage.subarray(i * this.Dh, (i + 1) * this.Dh));
  }

  /** Gives `seqId` a row (a hole first, else a new last row; the caller ensured capacity). */
  place(seqId: number, len: number): number {
    let b = this.rowSeq.indexOf(HOLE);
    if (b < 0) {
      b = this.rowSeq.length;
      this.rowSeq.push(seqId);
      this.rowLen.push(len);
    } else {
      this.rowSeq[b] = seqId;
      this.rowLen[b] = len;
    }
    this.rowOf.set(seqId, b);
    return b;
  }

  /** Holes among the rows. */
  get holes(): number {
    let n = 0;
    for (const s of this.rowSeq) if (s === HOLE) n++;
    return n;
  }

  /** Frees a row: it becomes a hole (trailing holes are dropped at once). */
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

  /** Closes every hole by moving the last row into it. */
  compact(): void {
    for (let b = 0; b < this.rowSeq.length; b++) {
      if (this.rowSeq[b] !== HOLE) continue;
      const last = this.rowSeq.length - 1;
      this.moveRow(last, b);
      this.rowSeq.pop();
      this.rowLen.pop();
      this.dropTrailingHoles();
    }
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
        else
          for (let h = 0; h < this.H; h++)
            buf.copyWithin(
              (to * this.H + h) * P * Dh,
              (from * this.H + h) * P * Dh,
              ((from * this.H + h) * P + n) * Dh,
            );
      }
    }
    const moved = this.rowSeq[from]!;
    this.rowSeq[to] = moved;
    this.rowLen[to] = this.rowLen[from]!;
    this.rowOf.set(moved, to);
  }

  /** Copies the first `n` slots of row `b` of `src` (another group) into row `to` of this one. */
  copyRowFrom(src: RowGroup, b: number, to: number, n: number): void {
    const Dh = this.Dh;
    for (let l = 0; l < this.L; l++) {
      for (let h = 0; h < this.H; h++) {
        const s = (b * this.H + h) * src.pcap * Dh;
        const d = (to * this.H + h) * this.pcap * Dh;
        this.bufK[l]!.set(src.bufK[l]!.subarray(s, s + n * Dh), d);
        this.bufV[l]!.set(src.bufV[l]!.subarray(s, s + n * Dh), d);
      }
    }
  }
}
