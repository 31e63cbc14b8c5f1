/**
 * Runner for the usual exported layout (`input_ids`, `attention_mask`, `position_ids`,
 * `past_key_values.L.key/value` → `logits` [B,T,V], `present.L.key/value`), so a user's own
 * export of that shape runs. Decodes are batched: the decoding sequences form one left-padded
 * batch ([B,H,P,Dh], row b's real slots at the end, `attention_mask` 0 on its padding), and the
 * batch's `present` becomes the next step's past as it is, with no copy in JS; the batch is
 * rebuilt (rows copied once) only when the set of decoding sequences changes. Because `present`
 * is the whole cache copied out, most decode steps fetch `logits` alone and re-run the tokens
 * since the last commit; presents are fetched every HF_COMMIT_EVERY tokens or before anything
 * reads blocks or moves rows. Prompts and chunks run alone (B=1). Blocks are copied to the
 * store whole, when their K/V is kept. See docs/engine.md.
 */
import { performance } from 'node:perf_hooks';
import type { OrtSession, OrtTensorInput } from '../onnx/ort.js';
import { tensorF32, tensorI64 } from '../onnx/ort.js';
import { missingInputs } from '../../schema/kv-layout.js';
import type { ModelSpec } from './config.js';
import type { KvStore } from './kv-store.js';
import type { ModelRunner, RunItem, RunResult } from './runner.js';

/** int64 inputs are written as two int32 words, low word first on little-endian hosts. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** K/V of sequences: `rows` rows of `slots` slots per layer ([rows,H,slots,Dh]); row r's real slots start at `pad[r]`. */
interface KvRows {
  keys: Float32Array[];
  values: Float32Array[];
  slots: number;
  pad: number[];
}

/** A sequence outside the batch (after its prompt ran, before it decodes): one row. */
interface Solo extends KvRows {
  readonly seqId: number;
}

/** The decoding batch. */
interface Batch extends KvRows {
  /** Sequence of each row; -1 once released (the row is dropped at the next rebuild). */
  readonly seqIds: number[];
  readonly rowOf: Map<number, number>;
  /**
   * Per row, the tokens run since the last commit, whose K/V are not in the rows yet (the same
   * count for every row: the batch only defers while every row decodes every step).
   */
  readonly pending: number[][];
  /** Per row, its block table at its last step (the blocks its pending positions fill). */
  readonly tables: (readonly number[])[];
}

/**
 * A decode step of two or more rows fetches `present` (the whole cache, copied out) only every
 * this many steps; in between it fetches logits alone and re-runs the tokens since the last commit as new
 * tokens (T grows 1, 2, … up to this), which costs far less than the copy at batch.
 */
export const HF_COMMIT_EVERY = 4;

/** The usual-layout runner. */
export class HfRunner implements ModelRunner {
  private readonly solos = new Map<number, Solo>();
  private batch: Batch | null = null;
  private readonly names: { pk: string[]; pv: string[]; ok: string[]; ov: string[] };
  private sessionMs = 0;

  constructor(
    private readonly session: OrtSession,
    readonly spec: ModelSpec,
    private readonly store: KvStore | null,
  ) {
    const r = (f: (l: number) => string): string[] => Array.from({ length: spec.numLayers }, (_, l) => f(l));
    this.names = {
      pk: r((l) => `past_key_values.${l}.key`),
      pv: r((l) => `past_key_values.${l}.value`),
      ok: r((l) => `present.${l}.key`),
      ov: r((l) => `present.${l}.value`),
    };
    // The frontend's model-config check applies the same rule to the file (schema/kv-layout.ts).
    const missing = missingInputs('hf', spec.numLayers, session.inputNames);
    if (missing.length > 0)
      throw new Error(`model is not in the usual exported layout: missing inputs ${missing.join(', ')}`);
  }

  /** Rows in the current decode batch (released ones included until the next rebuild), for tests. */
  get batchRows(): number {
    return this.batch?.seqIds.length ?? 0;
  }

  async run(items: readonly RunItem[]): Promise<RunResult[]> {
    const out: RunResult[] = new Array<RunResult>(items.length).fill(null);
    // Deferred K/V is committed before anything else can read blocks or move rows.
    const b0 = this.batch;
    const lost = new Map<number, Error>();
    if (b0 !== null && (b0.pending[0]?.length ?? 0) > 0 && !this.isLockstep(items)) {
      try {
        await this.commit(b0);
      } catch (err) {
        // The batch's deferred K/V is lost: its rows fail, the other items still run.
        const e = err instanceof Error ? err : new Error(String(err));
        const ids = [...b0.seqIds];
        for (const id of ids) this.release(id);
        this.batch = null;
        for (const id of ids) lost.set(id, e);
      }
    }
    const decode: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      const gone = lost.get(it.seqId);
      if (gone !== undefined) {
        out[i] = gone;
        continue;
      }
      const known = this.solos.has(it.seqId) || (this.batch?.rowOf.has(it.seqId) ?? false);
      if (it.count === 1 && known) {
        decode.push(i);
        continue;
      }
      // Each solo item is its own run: a failure fails only that item (its cache is dropped).
      try {
        out[i] = await this.runSolo(it);
      } catch (err) {
        this.release(it.seqId);
        out[i] = err instanceof Error ? err : new Error(String(err));
      }
    }
    if (decode.length > 0) {
      const got: (Float32Array | null)[] = new Array<Float32Array | null>(items.length).fill(null);
      try {
        await this.runBatch(items, decode, got);
        for (const i of decode) out[i] = got[i] ?? null;
      } catch (err) {
        // One batched run carried these rows: they fail together, solos above keep their results.
        const e = err instanceof Error ? err : new Error(String(err));
        for (const i of decode) {
          this.release(items[i]!.seqId);
          out[i] = e;
        }
      }
    }
    return out;
  }

  /** True when the step decodes every row of the batch, and nothing else (deferring may go on). */
  private isLockstep(items: readonly RunItem[]): boolean {
    const b = this.batch!;
    if (items.length !== b.seqIds.length || b.rowOf.size !== b.seqIds.length) return false;
    for (const it of items) if (it.count !== 1 || !it.wantLogits || !b.rowOf.has(it.seqId)) return false;
    return true;
  }

  /**
   * Runs the batch's pending tokens (every row, released ones too: their full blocks may be in
   * the prefix cache already) and keeps their K/V: the rows grow by the pending count and the
   * blocks they fill are written. Fetches the presents only.
   */
  private async commit(b: Batch): Promise<void> {
    const B = b.seqIds.length;
    const T = b.pending[0]!.length;
    const P = b.slots;
    const S = P + T;
    const ids = new BigInt64Array(B * T);
    const pos = new BigInt64Array(B * T);
    const mask = new BigInt64Array(B * S);
    const ids32 = new Int32Array(ids.buffer);
    const pos32 = new Int32Array(pos.buffer);
    const mask32 = new Int32Array(mask.buffer);
    for (let r = 0; r < B; r++) {
      const c = HfRunner.lenOf(b, r);
      for (let t = 0; t < T; t++) {
        setI64(ids, ids32, r * T + t, b.pending[r]![t]!);
        setI64(pos, pos32, r * T + t, c + t);
      }
      for (let s = b.pad[r]!; s < S; s++) setI64(mask, mask32, r * S + s, 1);
    }
    const feeds = this.feedsOf(b, ids, mask, pos, T, S);
    const res = await this.timedRun(feeds, this.fetches(false));
    this.keep(b, res, T);
    if (b.rowOf.size === 0) this.batch = null;
  }

  /** The graph's feeds for batch `b`: T new tokens per row, S mask positions, the past as it is. */
  private feedsOf(
    b: Batch,
    ids: BigInt64Array,
    mask: BigInt64Array,
    pos: BigInt64Array,
    T: number,
    S: number,
  ): Record<string, OrtTensorInput> {
    const { numHeads: H, headDim: Dh, numLayers: L } = this.spec;
    const B = b.seqIds.length;
    const P = b.slots;
    const feeds: Record<string, OrtTensorInput> = {
      input_ids: tensorI64(ids, [B, T]),
      attention_mask: tensorI64(mask, [B, S]),
      position_ids: tensorI64(pos, [B, T]),
    };
    for (let l = 0; l < L; l++) {
      feeds[this.names.pk[l]!] = tensorF32(b.keys[l]!, [B, H, P, Dh]);
      feeds[this.names.pv[l]!] = tensorF32(b.values[l]!, [B, H, P, Dh]);
    }
    return feeds;
  }

  /** Takes a run's presents as the batch's rows (T new slots each) and writes the blocks they fill. */
  private keep(b: Batch, res: Record<string, { data: unknown }>, T: number): void {
    const before = b.seqIds.map((_, r) => HfRunner.lenOf(b, r));
    for (let l = 0; l < this.spec.numLayers; l++) {
      b.keys[l] = res[this.names.ok[l]!]!.data as Float32Array;
      b.values[l] = res[this.names.ov[l]!]!.data as Float32Array;
    }
    b.slots += T;
    for (let r = 0; r < b.seqIds.length; r++) {
      this.storeFilledBlocks(b, r, before[r]!, before[r]! + T, b.tables[r]!);
      b.pending[r]!.length = 0;
    }
  }

  /** Length (real slots) of row `r` of `rows`. */
  private static lenOf(rows: KvRows, r: number): number {
    return rows.slots - rows.pad[r]!;
  }

  /** Takes a sequence out of the batch into its own row (it runs a chunk alone, or sits a step out). */
  private extract(seqId: number): Solo {
    const b = this.batch!;
    if ((b.pending[0]?.length ?? 0) > 0) throw new Error('hf runner: a row left the batch with uncommitted K/V');
    const r = b.rowOf.get(seqId)!;
    const len = HfRunner.lenOf(b, r);
    const solo = this.copyRows([{ from: b, row: r }], len, seqId) as Solo;
    b.rowOf.delete(seqId);
    b.seqIds[r] = -1;
    this.solos.set(seqId, solo);
    return solo;
  }

  /**
   * New left-padded rows of `slots` slots holding the given source rows' real slots; with
   * `seqId` the result is a Solo of one row.
   */
  private copyRows(src: readonly { from: KvRows; row: number }[], slots: number, seqId?: number): KvRows | Solo {
    const { numHeads: H, headDim: Dh, numLayers: L } = this.spec;
    const B = src.length;
    const keys: Float32Array[] = [];
    const values: Float32Array[] = [];
    const pad = src.map((s) => slots - HfRunner.lenOf(s.from, s.row));
    for (let l = 0; l < L; l++) {
      const k = new Float32Array(B * H * slots * Dh);
      const v = new Float32Array(B * H * slots * Dh);
      for (let b = 0; b < B; b++) {
        const { from, row } = src[b]!;
        const n = HfRunner.lenOf(from, row) * Dh;
        for (let h = 0; h < H; h++) {
          const s = ((row * H + h) * from.slots + from.pad[row]!) * Dh;
          const d = ((b * H + h) * slots + pad[b]!) * Dh;
          k.set(from.keys[l]!.subarray(s, s + n), d);
          v.set(from.values[l]!.subarray(s, s + n), d);
        }
      }
      keys.push(k);
      values.push(v);
    }
    return seqId === undefined ? { keys, values, slots, pad } : { seqId, keys, values, slots, pad };
  }

  /** A row filled from the block store: positions `[0, len)` of a prefix hit. */
  private soloFromBlocks(it: RunItem): Solo {
    const { numHeads: H, headDim: Dh, numLayers: L } = this.spec;
    const len = it.start;
    const c: Solo = { seqId: it.seqId, keys: [], values: [], slots: len, pad: [0] };
    for (let l = 0; l < L; l++) {
      c.keys.push(new Float32Array(H * len * Dh));
      c.values.push(new Float32Array(H * len * Dh));
    }
    if (len === 0) return c;
    const store = this.store;
    if (store === null) throw new Error('prefix hit without a block store');
    const bs = store.blockSize;
    for (let i = 0; i * bs < len; i++) {
      const n = Math.min(bs, len - i * bs) * Dh;
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const src = store.offset(it.blockTable[i]!, h, 0);
          const dst = (h * len + i * bs) * Dh;
          c.keys[l]!.set(store.k[l]!.subarray(src, src + n), dst);
          c.values[l]!.set(store.v[l]!.subarray(src, src + n), dst);
        }
      }
    }
    return c;
  }

  /** Output names to fetch: every present, and logits only when someone samples. */
  private fetches(wantLogits: boolean): string[] {
    const f: string[] = [];
    for (let l = 0; l < this.spec.numLayers; l++) f.push(this.names.ok[l]!, this.names.ov[l]!);
    if (wantLogits) f.push('logits');
    return f;
  }

  private async timedRun(feeds: Record<string, OrtTensorInput>, fetches: readonly string[]) {
    const t0 = performance.now();
    const r = await this.session.run(feeds, fetches);
    this.sessionMs += performance.now() - t0;
    return r;
  }

  /** Runs one sequence's tokens `[start, start + count)` alone (a prompt, a chunk, or a first token). */
  private async runSolo(it: RunItem): Promise<Float32Array | null> {
    const { numHeads: H, headDim: Dh, numLayers: L, vocabSize: V } = this.spec;
    if (this.batch?.rowOf.has(it.seqId)) this.extract(it.seqId);
    let c = this.solos.get(it.seqId);
    if (c === undefined) {
      c = this.soloFromBlocks(it);
      this.solos.set(it.seqId, c);
    }
    const have = HfRunner.lenOf(c, 0);
    if (have !== it.start)
      throw new Error(`sequence ${it.seqId}: cache holds ${have} positions, step starts at ${it.start}`);
    const P = c.slots;
    const T = it.count;
    const ids = new BigInt64Array(T);
    const pos = new BigInt64Array(T);
    for (let t = 0; t < T; t++) {
      ids[t] = BigInt(it.tokens[it.start + t]!);
      pos[t] = BigInt(it.start + t);
    }
    const mask = new BigInt64Array(P + T).fill(1n);
    mask.fill(0n, 0, c.pad[0]!);
    const feeds: Record<string, OrtTensorInput> = {
      input_ids: tensorI64(ids, [1, T]),
      attention_mask: tensorI64(mask, [1, P + T]),
      position_ids: tensorI64(pos, [1, T]),
    };
    for (let l = 0; l < L; l++) {
      feeds[this.names.pk[l]!] = tensorF32(c.keys[l]!, [1, H, P, Dh]);
      feeds[this.names.pv[l]!] = tensorF32(c.values[l]!, [1, H, P, Dh]);
    }
    const r = await this.timedRun(feeds, this.fetches(it.wantLogits));
    for (let l = 0; l < L; l++) {
      c.keys[l] = r[this.names.ok[l]!]!.data as Float32Array;
      c.values[l] = r[this.names.ov[l]!]!.data as Float32Array;
    }
    c.slots = P + T;
    this.storeFilledBlocks(c, 0, it.start, it.start + T, it.blockTable);
    if (!it.wantLogits) return null;
    return (r.logits!.data as Float32Array).subarray((T - 1) * V, T * V);
  }

  /** Makes the batch hold exactly the sequences of `ids` (in that order when rebuilt). */
  private ensureBatch(ids: readonly number[]): Batch {
    const old = this.batch;
    if (
      old !== null &&
      old.rowOf.size === ids.length &&
      old.seqIds.length === ids.length &&
      ids.every((id) => old.rowOf.has(id))
    )
      return old;
    // Rows of the old batch that do not decode this step (but live) step out into their own row.
    const want = new Set(ids);
    if (old !== null) for (const id of [...old.rowOf.keys()]) if (!want.has(id)) this.extract(id);
    const src = ids.map((id) => {
      const r = old?.rowOf.get(id);
      return r !== undefined ? { from: old as KvRows, row: r } : { from: this.solos.get(id)! as KvRows, row: 0 };
    });
    let slots = 0;
    for (const s of src) slots = Math.max(slots, HfRunner.lenOf(s.from, s.row));
    const rows = this.copyRows(src, slots);
    for (const id of ids) this.solos.delete(id);
    const b: Batch = {
      ...rows,
      seqIds: [...ids],
      rowOf: new Map(ids.map((id, r) => [id, r])),
      pending: ids.map(() => []),
      tables: ids.map(() => []),
    };
    this.batch = b;
    return b;
  }

  private async runBatch(
    items: readonly RunItem[],
    decode: readonly number[],
    out: (Float32Array | null)[],
  ): Promise<void> {
    const V = this.spec.vocabSize;
    const b = this.ensureBatch(decode.map((i) => items[i]!.seqId));
    const B = b.seqIds.length;
    const P = b.slots;
    const k = b.pending[0]!.length;
    const T = k + 1;
    const S = P + T;
    const ids = new BigInt64Array(B * T);
    const pos = new BigInt64Array(B * T);
    const mask = new BigInt64Array(B * S);
    const ids32 = new Int32Array(ids.buffer);
    const pos32 = new Int32Array(pos.buffer);
    const mask32 = new Int32Array(mask.buffer);
    let wantLogits = false;
    for (const i of decode) {
      const it = items[i]!;
      const r = b.rowOf.get(it.seqId)!;
      const c = HfRunner.lenOf(b, r);
      if (c + k !== it.start)
        throw new Error(`sequence ${it.seqId}: cache holds ${c + k} positions, step starts at ${it.start}`);
      const pend = b.pending[r]!;
      for (let t = 0; t < k; t++) setI64(ids, ids32, r * T + t, pend[t]!);
      setI64(ids, ids32, r * T + k, it.tokens[it.start]!);
      for (let t = 0; t < T; t++) setI64(pos, pos32, r * T + t, c + t);
      for (let s = b.pad[r]!; s < S; s++) setI64(mask, mask32, r * S + s, 1);
      b.tables[r] = it.blockTable;
      if (it.wantLogits) wantLogits = true;
    }
    // Commit (fetch the presents) every HF_COMMIT_EVERY tokens, or when nobody samples. A lone
    // row's present is small: re-running its pending tokens would cost more than the copy.
    const commit = T >= HF_COMMIT_EVERY || !wantLogits || B === 1;
    const feeds = this.feedsOf(b, ids, mask, pos, T, S);
    const res = await this.timedRun(feeds, commit ? this.fetches(wantLogits) : ['logits']);
    if (commit) this.keep(b, res, T);
    else for (const i of decode) b.pending[b.rowOf.get(items[i]!.seqId)!]!.push(items[i]!.tokens[items[i]!.start]!);
    if (!wantLogits) return;
    const logits = res.logits!.data as Float32Array;
    for (const i of decode) {
      const it = items[i]!;
      const r = b.rowOf.get(it.seqId)!;
      // logits is [B, T, V]: the row's last position.
      if (it.wantLogits) out[i] = logits.subarray((r * T + T - 1) * V, (r * T + T) * V);
    }
  }

  /**
   * Copies the blocks of row `r` that became full with positions `[start, end)` into
   * the block store, whole: one contiguous run per (layer, K/V, head). Only full blocks are
   * ever read back, and the engine registers a block in the prefix cache in the step that fills it.
   */
  private storeFilledBlocks(rows: KvRows, r: number, start: number, end: number, table: readonly number[]): void {
    const store = this.store;
    if (store === null) return;
    const { numHeads: H, headDim: Dh, numLayers: L } = this.spec;
    const bs = store.blockSize;
    const n = bs * Dh;
    for (let i = Math.floor(start / bs); (i + 1) * bs <= end; i++) {
      const blk = table[i]!;
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const src = ((r * H + h) * rows.slots + rows.pad[r]! + i * bs) * Dh;
          const dst = store.offset(blk, h, 0);
          store.k[l]!.set(rows.keys[l]!.subarray(src, src + n), dst);
          store.v[l]!.set(rows.values[l]!.subarray(src, src + n), dst);
        }
      }
    }
  }

  release(seqId: number): void {
    this.solos.delete(seqId);
    const b = this.batch;
    if (b === null) return;
    const r = b.rowOf.get(seqId);
    if (r === undefined) return;
    b.rowOf.delete(seqId);
    b.seqIds[r] = -1;
    // A batch with uncommitted K/V stays until the next run commits it (its blocks may be cached).
    if (b.rowOf.size === 0 && (b.pending[0]?.length ?? 0) === 0) this.batch = null;
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

/** Writes a small non-negative int64: two int32 words on little-endian hosts, else a BigInt. */
function setI64(a: BigInt64Array, w: Int32Array, i: number, v: number): void {
  if (LITTLE_ENDIAN) {
    w[2 * i] = v;
    w[2 * i + 1] = 0;
  } else a[i] = BigInt(v);
}
