/**
 * Runner for the usual exported layout (`input_ids`, `attention_mask`, `position_ids` when
 * taken, `past_key_values.L.key/value` → `logits` [B,T,V], `present.L.key/value`, Optimum's
 * `use_cache_branch`), so a user's own export runs: grouped-query attention (the K/V have fewer
 * heads than the queries) and float16 graphs included. Decodes are batched: the decoding
 * sequences form one left-padded batch ([B,H,P,Dh], row b's real slots at the end,
 * `attention_mask` 0 on its padding) over two preallocated buffers per layer: the past is a view
 * of one, and onnxruntime writes `present` (the past with the new position) straight into the
 * other, which is the next step's past. So a decode step copies no K/V in JS and allocates no
 * K/V-sized memory (only its small id, position and mask inputs); the batch is rebuilt (rows
 * copied once) only when the set of decoding sequences changes. Prompts and chunks run alone
 * (B=1). Blocks are copied to the store whole, when they fill. See docs/engine.md.
 */
import { performance } from 'node:perf_hooks';
import type { OrtSession, OrtTensorInput, OrtTensorOutput } from '../onnx/ort.js';
import { tensorBool, tensorF16, tensorF32, tensorI64 } from '../onnx/ort.js';
import type { ModelSpec } from './config.js';
import type { HfGraphIo } from './hf-io.js';
import { halfToFloat, hfGraphIo, kvTensor, setI64 } from './hf-io.js';
import type { KvBuffers, KvRows } from './hf-rows.js';
import { HfRowCopier, lenOf } from './hf-rows.js';
import type { KvArray, KvStore } from './kv-store.js';
import type { ModelRunner, RunItem, RunResult } from './runner.js';

/** The decoding batch: its rows are views of `cur`; `nxt` receives the next step's present. */
interface Batch extends KvRows {
  /** Sequence of each row; -1 once released (the row is dropped at the next rebuild). */
  readonly seqIds: number[];
  readonly rowOf: Map<number, number>;
  /** Per row, its block table at its last step. */
  readonly tables: (readonly number[])[];
  /** Slots per row the buffers hold. */
  cap: number;
  cur: KvBuffers;
  nxt: KvBuffers;
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** The usual-layout runner. */
export class HfRunner implements ModelRunner {
  private readonly solos = new Map<number, KvRows>();
  private batch: Batch | null = null;
  /** A finished batch's buffers, reused by the next batch that fits in them. */
  private spare: [KvBuffers, KvBuffers] | null = null;
  private readonly io: HfGraphIo;
  private readonly rows: HfRowCopier;
  private sessionMs = 0;
  /** Decode logits, written in place by onnxruntime (float16 graphs: converted into `logits32`). */
  private logits: Float32Array | Uint16Array = new Float32Array(0);
  private logits32 = new Float32Array(0);

  constructor(
    private readonly session: OrtSession,
    readonly spec: ModelSpec,
    private readonly store: KvStore<KvArray> | null,
  ) {
    // The frontend's model check applies the same names to the file (schema/kv-layout.ts).
    this.io = hfGraphIo(session, spec.numLayers);
    this.rows = new HfRowCopier(spec, this.io.kvType);
  }

  /** Element type of the graph's K/V (the block store must hold the same). */
  get kvType(): 'float32' | 'float16' {
    return this.io.kvType;
  }

  /** Rows in the current decode batch (released ones included until the next rebuild), for tests. */
  get batchRows(): number {
    return this.batch?.seqIds.length ?? 0;
  }

  async run(items: readonly RunItem[]): Promise<RunResult[]> {
    const out: RunResult[] = new Array<RunResult>(items.length).fill(null);
    const decode: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      const known = this.solos.has(it.seqId) || (this.batch?.rowOf.has(it.seqId) ?? false);
      if (it.count === 1 && known) {
        decode.push(i);
        continue;
      }
      // Each solo item is its own run, in plan order: a failure fails only that item.
      try {
        out[i] = await this.runSolo(it);
      } catch (err) {
        this.release(it.seqId);
        out[i] = asError(err);
      }
    }
    if (decode.length > 0) {
      try {
        await this.runBatch(items, decode, out);
      } catch (err) {
        // One batched run carried these rows: they fail together, solos above keep their results.
        const e = asError(err);
        for (const i of decode) {
          this.release(items[i]!.seqId);
          out[i] = e;
        }
      }
    }
    return out;
  }

  /** The feeds every run gives besides the past: ids, mask, positions, the merged decoder's branch. */
  private baseFeeds(B: number, T: number, S: number, fill: (ids: Setter, pos: Setter, mask: Setter) => void) {
    const ids = new BigInt64Array(B * T);
    const pos = new BigInt64Array(B * T);
    const mask = new BigInt64Array(B * S);
    const w = (a: BigInt64Array): Setter => {
      const w32 = new Int32Array(a.buffer);
      return (i, v) => setI64(a, w32, i, v);
    };
    fill(w(ids), w(pos), w(mask));
    const feeds: Record<string, OrtTensorInput> = {
      input_ids: tensorI64(ids, [B, T]),
      attention_mask: tensorI64(mask, [B, S]),
    };
    if (this.io.positionIds) feeds.position_ids = tensorI64(pos, [B, T]);
    // Optimum's merged decoder: the first run (no past yet) takes the branch without cache.
    if (this.io.useCacheBranch) feeds.use_cache_branch = tensorBool(Uint8Array.of(S > T ? 1 : 0), [1]);
    return feeds;
  }

  private pastFeeds(feeds: Record<string, OrtTensorInput>, rows: KvRows, B: number): void {
    const dims = [B, this.spec.numHeads, rows.slots, this.spec.headDim];
    for (let l = 0; l < this.spec.numLayers; l++) {
      feeds[this.io.pastKey[l]!] = kvTensor(rows.keys[l]!, dims);
      feeds[this.io.pastValue[l]!] = kvTensor(rows.values[l]!, dims);
    }
  }

  private async timedRun(
    feeds: Record<string, OrtTensorInput>,
    fetches: readonly string[],
    into?: Record<string, OrtTensorInput>,
  ): Promise<Record<string, OrtTensorOutput>> {
    const t0 = performance.now();
    const r = await this.session.run(feeds, fetches, into);
    this.sessionMs += performance.now() - t0;
    return r;
  }

  /** Takes a sequence out of the batch into its own row (it runs a chunk alone, or sits a step out). */
  private extract(seqId: number): KvRows {
    const b = this.batch!;
    const r = b.rowOf.get(seqId)!;
    const solo = this.rows.copyRows([{ from: b, row: r }], lenOf(b, r));
    b.rowOf.delete(seqId);
    b.seqIds[r] = -1;
    this.solos.set(seqId, solo);
    return solo;
  }

  /** Runs one sequence's tokens `[start, start + count)` alone (a prompt, a chunk, or a first token). */
  private async runSolo(it: RunItem): Promise<Float32Array | null> {
    const V = this.spec.vocabSize;
    if (this.batch?.rowOf.has(it.seqId)) this.extract(it.seqId);
    let c = this.solos.get(it.seqId);
    if (c === undefined) {
      c = this.rows.fromBlocks(this.store, it.blockTable, it.start);
      this.solos.set(it.seqId, c);
    }
    const have = lenOf(c, 0);
    if (have !== it.start)
      throw new Error(`sequence ${it.seqId}: cache holds ${have} positions, step starts at ${it.start}`);
    const P = c.slots;
    const T = it.count;
    const feeds = this.baseFeeds(1, T, P + T, (ids, pos, mask) => {
      for (let t = 0; t < T; t++) {
        ids(t, it.tokens[it.start + t]!);
        pos(t, it.start + t);
      }
      for (let s = c.pad[0]!; s < P + T; s++) mask(s, 1);
    });
    this.pastFeeds(feeds, c, 1);
    const fetches = [...this.io.presentKey, ...this.io.presentValue];
    if (it.wantLogits) fetches.push('logits');
    const r = await this.timedRun(feeds, fetches);
    for (let l = 0; l < this.spec.numLayers; l++) {
      c.keys[l] = r[this.io.presentKey[l]!]!.data as KvArray;
      c.values[l] = r[this.io.presentValue[l]!]!.data as KvArray;
    }
    c.slots = P + T;
    this.rows.storeFilled(this.store, c, 0, it.start, it.start + T, it.blockTable);
    if (!it.wantLogits) return null;
    const data = r.logits!.data as Float32Array | Uint16Array;
    const last = data.subarray((T - 1) * V, T * V);
    return last instanceof Uint16Array ? halfToFloat(last, new Float32Array(V)) : last;
  }

  /**
   * Makes the batch hold exactly the sequences of `ids` (in that order when rebuilt), with room
   * for at least `cap` slots per row.
   */
  private ensureBatch(ids: readonly number[], cap: number): Batch {
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
      return r !== undefined ? { from: old as KvRows, row: r } : { from: this.solos.get(id)!, row: 0 };
    });
    let slots = 0;
    for (const s of src) slots = Math.max(slots, lenOf(s.from, s.row));
    cap = Math.max(cap, slots + 1);
    const n = this.rows.size(ids.length, cap);
    // The old batch's next buffers are free: the rows are copied into them when they fit; its
    // current ones (read by the copy) become the new next ones.
    const reuse = old !== null ? [old.nxt, old.cur] : this.spare;
    this.spare = null;
    const cur = this.rows.buffers(n, reuse?.[0]);
    const rows = this.rows.copyRows(src, slots, cur);
    const nxt = this.rows.buffers(n, reuse?.[1]);
    for (const id of ids) this.solos.delete(id);
    const b: Batch = {
      ...rows,
      seqIds: [...ids],
      rowOf: new Map(ids.map((id, r) => [id, r])),
      tables: ids.map(() => []),
      cap: Math.floor(Math.min(cur.k[0]!.length, nxt.k[0]!.length) / this.rows.size(ids.length, 1)),
      cur,
      nxt,
    };
    this.batch = b;
    return b;
  }

  /** Grows the batch's buffers to `cap` slots per row, keeping its rows (one copy, rarely). */
  private grow(b: Batch, cap: number): void {
    const B = b.seqIds.length;
    const n = this.rows.size(B, cap);
    const cur = this.rows.buffers(n);
    for (let l = 0; l < this.spec.numLayers; l++) {
      cur.k[l]!.set(b.keys[l]!);
      cur.v[l]!.set(b.values[l]!);
      b.keys[l] = cur.k[l]!.subarray(0, b.keys[l]!.length);
      b.values[l] = cur.v[l]!.subarray(0, b.values[l]!.length);
    }
    b.cur = cur;
    b.nxt = this.rows.buffers(n);
    b.cap = cap;
  }

  private async runBatch(items: readonly RunItem[], decode: readonly number[], out: RunResult[]): Promise<void> {
    const { vocabSize: V, numLayers: L, numHeads: H, headDim: Dh } = this.spec;
    let cap = 0;
    for (const i of decode) cap = Math.max(cap, items[i]!.rowCapacity);
    const b = this.ensureBatch(
      decode.map((i) => items[i]!.seqId),
      cap,
    );
    const B = b.seqIds.length;
    const P = b.slots;
    const S = P + 1;
    if (S > b.cap) this.grow(b, Math.max(S, cap, 2 * b.cap));
    const rowOfItem = decode.map((i) => {
      const it = items[i]!;
      const r = b.rowOf.get(it.seqId)!;
      if (lenOf(b, r) !== it.start)
        throw new Error(`sequence ${it.seqId}: cache holds ${lenOf(b, r)} positions, step starts at ${it.start}`);
      b.tables[r] = it.blockTable;
      return r;
    });
    const feeds = this.baseFeeds(B, 1, S, (ids, pos, mask) => {
      // Released rows (until the next rebuild) run on as padding: their output is not read.
      for (let r = 0; r < B; r++) {
        ids(r, this.spec.padId);
        pos(r, lenOf(b, r));
        for (let s = b.pad[r]!; s < S; s++) mask(r * S + s, 1);
      }
      decode.forEach((i, a) => ids(rowOfItem[a]!, items[i]!.tokens[items[i]!.start]!));
    });
    this.pastFeeds(feeds, b, B);
    // The present goes straight into the other buffers, the logits into one reused array.
    const into: Record<string, OrtTensorInput> = {};
    const n = B * H * S * Dh;
    const dims = [B, H, S, Dh];
    for (let l = 0; l < L; l++) {
      into[this.io.presentKey[l]!] = kvTensor(b.nxt.k[l]!.subarray(0, n), dims);
      into[this.io.presentValue[l]!] = kvTensor(b.nxt.v[l]!.subarray(0, n), dims);
    }
    const wantLogits = decode.some((i) => items[i]!.wantLogits);
    if (wantLogits) {
      if (this.logits.length < B * V) {
        this.logits = this.io.logitsType === 'float16' ? new Uint16Array(B * V) : new Float32Array(B * V);
        this.logits32 = this.io.logitsType === 'float16' ? new Float32Array(B * V) : new Float32Array(0);
      }
      const lg = this.logits.subarray(0, B * V);
      into.logits = lg instanceof Uint16Array ? tensorF16(lg, [B, 1, V]) : tensorF32(lg, [B, 1, V]);
    }
    await this.timedRun(feeds, Object.keys(into), into);
    for (let l = 0; l < L; l++) {
      b.keys[l] = into[this.io.presentKey[l]!]!.data as KvArray;
      b.values[l] = into[this.io.presentValue[l]!]!.data as KvArray;
    }
    [b.cur, b.nxt] = [b.nxt, b.cur];
    b.slots = S;
    decode.forEach((i, a) => {
      const it = items[i]!;
      const r = rowOfItem[a]!;
      this.rows.storeFilled(this.store, b, r, it.start, it.start + 1, it.blockTable);
      if (!it.wantLogits) return;
      const lg = this.logits;
      out[i] =
        lg instanceof Uint16Array
          ? halfToFloat(lg.subarray(r * V, (r + 1) * V), this.logits32.subarray(r * V, (r + 1) * V))
          : lg.subarray(r * V, (r + 1) * V);
    });
  }

  release(seqId: number): void {
    this.solos.delete(seqId);
    const b = this.batch;
    if (b === null) return;
    const r = b.rowOf.get(seqId);
    if (r === undefined) return;
    b.rowOf.delete(seqId);
    b.seqIds[r] = -1;
    if (b.rowOf.size === 0) {
      this.spare = [b.cur, b.nxt];
      this.batch = null;
    }
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

/** Writes element `i` of one int64 input. */
type Setter = (i: number, v: number) => void;
