/**
 * Runner for the fast KV layout: past K/V are read-only inputs [B,H,P,Dh], only the new tokens'
 * K/V come out. Every running sequence owns a persistent working row of the capacity the KV
 * budget gave it (`RunItem.rowCapacity`, a power-of-two multiple of `rowGrowStep`); rows of one
 * capacity share a `RowGroup` buffer, so a decode step is one run per capacity over a prefix view
 * of that buffer (no copy) and a short sequence never attends over a long one's slots. Each new
 * token's K/V is written into its row; a KV block is copied into the block store when it fills.
 * The groups' buffers together stay within the row budget (`numRowTokens` positions).
 */
import { performance } from 'node:perf_hooks';
import type { OrtSession, OrtTensorInput } from '../onnx/ort.js';
import { tensorF32, tensorI64 } from '../onnx/ort.js';
import { missingInputs } from '../../schema/kv-layout.js';
import type { ModelSpec } from './config.js';
import { rowCapacityFor } from './kv-cache-manager.js';
import type { KvStore } from './kv-store.js';
import { MASK, RowGroup } from './row-group.js';
import { loadFromBlocks, storeFilledBlocks, writeDecoded, writePrefilled } from './fast-rows.js';
import type { ModelRunner, RunItem, RunResult } from './runner.js';

/** int64 inputs are written as two int32 words, low word first on little-endian hosts. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** Sizing knobs of the working rows. */
export interface FastRunnerOptions {
  /** Smallest row capacity; capacities are this times a power of two. */
  readonly rowGrowStep: number;
  /** Longest sequence; caps the row capacity. */
  readonly maxModelLen: number;
  /** Positions all row buffers together may hold (the rows' share of the KV budget). */
  readonly numRowTokens: number;
}

/** Input/output names of the fast layout. */
export const FAST_INPUTS = {
  ids: 'input_ids',
  pos: 'position_ids',
  bias: 'attn_bias',
  numLogits: 'num_logits',
} as const;

/** The fast-layout runner. */
export class FastRunner implements ModelRunner {
  private readonly H: number;
  private readonly Dh: number;
  private readonly L: number;
  /** Row groups by capacity. */
  private readonly groups = new Map<number, RowGroup>();
  private readonly groupOf = new Map<number, RowGroup>();
  /** Prefill `attn_bias` scratch. */
  private bias = new Float32Array(0);
  private readonly pastKeyNames: string[];
  private readonly pastValueNames: string[];
  private readonly newKeyNames: string[];
  private readonly newValueNames: string[];
  private sessionMs = 0;
  /** Newcomers of the current run whose row is still to be filled from blocks. */
  private readonly pendingLoad = new Set<number>();
  /** A row was released since the last placement (holes to close, maybe a group to drop). */
  private released = false;
  /** The graph takes `num_logits` (logits for the last N positions): drafts can be verified. */
  readonly multiLogits: boolean;
  /** `num_logits` = 1, fed to every run of a graph that takes it (one tensor, made once). */
  private readonly oneLogit: OrtTensorInput | null;

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
    // The frontend's model-config check applies the same rule to the file (schema/kv-layout.ts).
    const missing = missingInputs('fast', this.L, session.inputNames);
    if (missing.length > 0) throw new Error(`model is not in the fast KV layout: missing inputs ${missing.join(', ')}`);
    this.multiLogits = session.inputNames.includes(FAST_INPUTS.numLogits);
    this.oneLogit = this.multiLogits ? tensorI64(BigInt64Array.of(1n), [1]) : null;
  }

  /** Row groups (capacity, allocated rows, live rows) and the positions their buffers hold. */
  get capacity(): {
    readonly groups: readonly { readonly positions: number; readonly rows: number; readonly live: number }[];
    readonly positions: number;
  } {
    const groups = [...this.groups.values()]
      .sort((a, b) => a.pcap - b.pcap)
      .map((g) => ({ positions: g.pcap, rows: g.bcap, live: g.rowOf.size }));
    return { groups, positions: groups.reduce((n, g) => n + g.positions * g.rows, 0) };
  }

  private totalPositions(except?: RowGroup): number {
    let n = 0;
    for (const g of this.groups.values()) if (g !== except) n += g.positions;
    return n;
  }

  /** Makes `g` hold at least `rows` rows: doubling while the row budget allows, else exactly. */
  private ensureRows(g: RowGroup, rows: number): void {
    if (rows <= g.bcap) return;
    const fit = Math.floor((this.opts.numRowTokens - this.totalPositions(g)) / g.pcap);
    g.resize(Math.max(rows, Math.min(Math.max(2 * g.bcap, 4), fit)));
  }

  async run(items: readonly RunItem[]): Promise<RunResult[]> {
    this.place(items);
    const out: RunResult[] = new Array<RunResult>(items.length).fill(null);
    // Multi-token items (prefills, chunks) run alone, in plan order, so an owner of shared blocks
    // runs before the items that adopt them; then single-token items run batched, one run per
    // row group. Each run's failure fails only the items it carried.
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
    for (const g of this.groups.values()) {
      let maxRow = -1;
      for (const it of items)
        if (it.count === 1 && this.groupOf.get(it.seqId) === g) maxRow = Math.max(maxRow, g.rowOf.get(it.seqId)!);
      if (maxRow < 0) continue;
      try {
        for (const it of items) if (it.count === 1 && this.groupOf.get(it.seqId) === g) this.loadPending(it);
        await this.runDecode(g, items, maxRow + 1, out);
      } catch (err) {
        const e = asError(err);
        for (let i = 0; i < items.length; i++)
          if (items[i]!.count === 1 && this.groupOf.get(items[i]!.seqId) === g) out[i] = e;
      }
    }
    return out;
  }

  /**
   * Gives every item a row of its capacity: newcomers a fresh one (filled from blocks just before
   * its run when it starts past 0 — the blocks may be filled earlier in this very step), grown
   * sequences a copy of their row in the bigger group. Then closes holes and, when the buffers
   * hold more than the row budget, drops empty groups and gives back slack.
   */
  private place(items: readonly RunItem[]): void {
    this.pendingLoad.clear();
    let incoming: Map<RowGroup, RunItem[]> | undefined;
    for (const it of items) {
      const cap =
        it.rowCapacity > 0
          ? it.rowCapacity
          : rowCapacityFor(it.start + it.count, {
              numRowTokens: this.opts.numRowTokens,
              minRow: this.opts.rowGrowStep,
              maxModelLen: this.opts.maxModelLen,
            });
      if (this.groupOf.get(it.seqId)?.pcap === cap) continue;
      let g = this.groups.get(cap);
      if (g === undefined) this.groups.set(cap, (g = new RowGroup(this.spec, cap)));
      incoming ??= new Map();
      const list = incoming.get(g);
      if (list === undefined) incoming.set(g, [it]);
      else list.push(it);
    }
    if (incoming === undefined && !this.released) return;
    this.released = false;
    for (const [g, list] of incoming ?? []) {
      this.ensureRows(g, g.rows + Math.max(0, list.length - g.holes));
      for (const it of list) {
        const old = this.groupOf.get(it.seqId);
        if (old === undefined) {
          g.place(it.seqId, it.start);
          if (it.start > 0) this.pendingLoad.add(it.seqId);
        } else {
          const ob = old.rowOf.get(it.seqId)!;
          const n = old.rowLen[ob]!;
          g.copyRowFrom(old, ob, g.place(it.seqId, n), n);
          old.release(it.seqId);
        }
        this.groupOf.set(it.seqId, g);
      }
    }
    for (const g of this.groups.values()) g.compact();
    // An empty group keeps its buffers for the next sequence of its capacity (one arrival per step
    // would otherwise allocate and fault in a fresh buffer every step) until the budget needs them.
    if (this.totalPositions() > this.opts.numRowTokens) {
      for (const [cap, g] of this.groups) {
        if (g.rows === 0) this.groups.delete(cap);
        else if (g.bcap > g.rows) g.resize(g.rows);
      }
    }
  }

  private loadPending(it: RunItem): void {
    if (!this.pendingLoad.delete(it.seqId)) return;
    const g = this.groupOf.get(it.seqId)!;
    loadFromBlocks(this.store, g, g.rowOf.get(it.seqId)!, it);
  }

  private async timedRun(feeds: Record<string, OrtTensorInput>) {
    const t0 = performance.now();
    const r = await this.session.run(feeds);
    this.sessionMs += performance.now() - t0;
    return r;
  }

  private async runDecode(g: RowGroup, items: readonly RunItem[], B: number, out: RunResult[]): Promise<void> {
    const P = g.pcap;
    const S = P + 1;
    // Rows without a token this step get PAD at slot 0, attend only to themselves, and are not written back.
    const pad = this.spec.padId;
    for (let b = 0; b < B; b++) {
      this.setI64(g.ids, g.ids32, b, pad);
      this.setI64(g.pos, g.pos32, b, 0);
    }
    const want = g.biasWant;
    want.fill(0, 0, B);
    const active: number[] = [];
    const rows: number[] = [];
    for (let i = 0; i < items.length; i++) {
      const it = items[i]!;
      if (it.count !== 1 || this.groupOf.get(it.seqId) !== g) continue;
      const b = g.rowOf.get(it.seqId)!;
      this.setI64(g.ids, g.ids32, b, it.tokens[it.start]!);
      this.setI64(g.pos, g.pos32, b, it.start);
      want[b] = it.start;
      active.push(i);
      rows.push(b);
    }
    // Bias rows: each active row sees its past up to its slot, every other row only itself;
    // only the slots whose state changed are rewritten.
    const bias = g.dbias;
    const open = g.biasOpen;
    for (let b = 0; b < B; b++) {
      const w = want[b]!;
      const have = open[b]!;
      if (w > have) bias.fill(0, b * S + have, b * S + w);
      else if (w < have) bias.fill(MASK, b * S + w, b * S + have);
      open[b] = w;
    }
    let feeds = g.decodeFeeds as Record<string, OrtTensorInput> | null;
    if (feeds === null || g.decodeFeedsB !== B) {
      feeds = {
        [FAST_INPUTS.ids]: tensorI64(g.ids.subarray(0, B), [B, 1]),
        [FAST_INPUTS.pos]: tensorI64(g.pos.subarray(0, B), [B, 1]),
        [FAST_INPUTS.bias]: tensorF32(bias.subarray(0, B * S), [B, 1, 1, S]),
      };
      if (this.oneLogit !== null) feeds[FAST_INPUTS.numLogits] = this.oneLogit;
      const n = B * g.rowStride;
      for (let l = 0; l < this.L; l++) {
        feeds[this.pastKeyNames[l]!] = tensorF32(g.bufK[l]!.subarray(0, n), [B, this.H, P, this.Dh]);
        feeds[this.pastValueNames[l]!] = tensorF32(g.bufV[l]!.subarray(0, n), [B, this.H, P, this.Dh]);
      }
      g.decodeFeeds = feeds;
      g.decodeFeedsB = B;
    }
    const r = await this.timedRun(feeds);
    const logits = r.logits!.data as Float32Array;
    const V = this.spec.vocabSize;
    for (let l = 0; l < this.L; l++) {
      writeDecoded(g, g.bufK[l]!, r[this.newKeyNames[l]!]!.data as Float32Array, items, active, rows);
      writeDecoded(g, g.bufV[l]!, r[this.newValueNames[l]!]!.data as Float32Array, items, active, rows);
    }
    for (let a = 0; a < active.length; a++) {
      const i = active[a]!;
      const it = items[i]!;
      const b = rows[a]!;
      g.rowLen[b] = it.start + 1;
      storeFilledBlocks(this.store, g, b, it, it.start, it.start + 1);
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
    const g = this.groupOf.get(it.seqId)!;
    const b = g.rowOf.get(it.seqId)!;
    const P = g.pcap;
    const T = it.count;
    const S = P + T;
    const ids = new BigInt64Array(T);
    const pos = new BigInt64Array(T);
    if (this.bias.length < T * S) this.bias = new Float32Array(T * S);
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
    const nl = it.wantLogits ? Math.min(it.numLogits ?? 1, T) : 1;
    if (this.oneLogit !== null)
      feeds[FAST_INPUTS.numLogits] = nl === 1 ? this.oneLogit : tensorI64(BigInt64Array.of(BigInt(nl)), [1]);
    const rs = g.rowStride;
    for (let l = 0; l < this.L; l++) {
      feeds[this.pastKeyNames[l]!] = tensorF32(g.bufK[l]!.subarray(b * rs, (b + 1) * rs), [1, this.H, P, this.Dh]);
      feeds[this.pastValueNames[l]!] = tensorF32(g.bufV[l]!.subarray(b * rs, (b + 1) * rs), [1, this.H, P, this.Dh]);
    }
    const r = await this.timedRun(feeds);
    for (let l = 0; l < this.L; l++) {
      writePrefilled(g, g.bufK[l]!, r[this.newKeyNames[l]!]!.data as Float32Array, T, it.start, b);
      writePrefilled(g, g.bufV[l]!, r[this.newValueNames[l]!]!.data as Float32Array, T, it.start, b);
    }
    g.rowLen[b] = it.start + T;
    storeFilledBlocks(this.store, g, b, it, it.start, it.start + T);
    return it.wantLogits ? (r.logits!.data as Float32Array).subarray(0, nl * this.spec.vocabSize) : null;
  }

  /**
   * Frees a sequence's row. Nothing moves here: the row becomes a hole, and the next `run()`
   * gives holes to newcomers first and closes the rest, so a batch that finishes together
   * moves nothing.
   */
  release(seqId: number): void {
    const g = this.groupOf.get(seqId);
    if (g === undefined) return;
    this.groupOf.delete(seqId);
    g.release(seqId);
    this.released = true;
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
