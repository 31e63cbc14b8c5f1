/**
 * Runner for the usual exported layout (`input_ids`, `attention_mask`, `position_ids`,
 * `past_key_values.L.key/value` → `logits` [B,T,V], `present.L.key/value`), so a user's own
 * export of that shape runs. Each sequence keeps the `present` tensors of its last run as its
 * next past and runs alone (B=1): correct and compatible, but the graph copies the whole cache
 * every step, which is why the fast layout exists (see docs/engine.md).
 */
import { performance } from 'node:perf_hooks';
import type { OrtSession, OrtTensorInput } from '../onnx/ort.js';
import { tensorF32, tensorI64 } from '../onnx/ort.js';
import type { ModelSpec } from './config.js';
import type { KvStore } from './kv-store.js';
import type { ModelRunner, RunItem, RunResult } from './runner.js';

interface SeqCache {
  len: number;
  /** Per layer [1,H,len,Dh]. */
  keys: Float32Array[];
  values: Float32Array[];
}

/** The usual-layout runner. */
export class HfRunner implements ModelRunner {
  private readonly caches = new Map<number, SeqCache>();
  private readonly names: { pk: string[]; pv: string[]; ok: string[]; ov: string[] };
  private sessionMs = 0;

  constructor(private readonly session: OrtSession, readonly spec: ModelSpec, private readonly store: KvStore | null) {
    const r = (f: (l: number) => string): string[] => Array.from({ length: spec.numLayers }, (_, l) => f(l));
    this.names = {
      pk: r((l) => `past_key_values.${l}.key`),
      pv: r((l) => `past_key_values.${l}.value`),
      ok: r((l) => `present.${l}.key`),
      ov: r((l) => `present.${l}.value`),
    };
    const missing = ['input_ids', 'attention_mask', 'position_ids', ...this.names.pk, ...this.names.pv].filter((n) => !session.inputNames.includes(n));
    if (missing.length > 0) throw new Error(`model is not in the usual exported layout: missing inputs ${missing.join(', ')}`);
  }

  async run(items: readonly RunItem[]): Promise<RunResult[]> {
    const out: RunResult[] = [];
    // Each item is its own run: a failure fails only that item (its cache is dropped).
    for (const it of items) {
      try {
        out.push(await this.runOne(it));
      } catch (err) {
        this.release(it.seqId);
        out.push(err instanceof Error ? err : new Error(String(err)));
      }
    }
    return out;
  }

  private cacheFromBlocks(it: RunItem): SeqCache {
    const { numHeads: H, headDim: Dh, numLayers: L } = this.spec;
    const len = it.start;
    const c: SeqCache = { len, keys: [], values: [] };
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

  private async runOne(it: RunItem): Promise<Float32Array | null> {
    const { numHeads: H, headDim: Dh, numLayers: L, vocabSize: V } = this.spec;
    let c = this.caches.get(it.seqId);
    if (c === undefined) {
      c = this.cacheFromBlocks(it);
      this.caches.set(it.seqId, c);
    }
    if (c.len !== it.start) throw new Error(`sequence ${it.seqId}: cache holds ${c.len} positions, step starts at ${it.start}`);
    const P = c.len;
    const T = it.count;
    const ids = new BigInt64Array(T);
    const pos = new BigInt64Array(T);
    for (let t = 0; t < T; t++) {
      ids[t] = BigInt(it.tokens[it.start + t]!);
      pos[t] = BigInt(it.start + t);
    }
    const feeds: Record<string, OrtTensorInput> = {
      input_ids: tensorI64(ids, [1, T]),
      attention_mask: tensorI64(new BigInt64Array(P + T).fill(1n), [1, P + T]),
      position_ids: tensorI64(pos, [1, T]),
    };
    for (let l = 0; l < L; l++) {
      feeds[this.names.pk[l]!] = tensorF32(c.keys[l]!, [1, H, P, Dh]);
      feeds[this.names.pv[l]!] = tensorF32(c.values[l]!, [1, H, P, Dh]);
    }
    const t0 = performance.now();
    const r = await this.session.run(feeds);
    this.sessionMs += performance.now() - t0;
    const S = P + T;
    for (let l = 0; l < L; l++) {
      c.keys[l] = r[this.names.ok[l]!]!.data as Float32Array;
      c.values[l] = r[this.names.ov[l]!]!.data as Float32Array;
    }
    c.len = S;
    if (this.store !== null) this.writeBlocks(c, it);
    if (!it.wantLogits) return null;
    const logits = r.logits!.data as Float32Array;
    return logits.subarray((T - 1) * V, T * V);
  }

  private writeBlocks(c: SeqCache, it: RunItem): void {
    const store = this.store!;
    const { numHeads: H, headDim: Dh, numLayers: L } = this.spec;
    const bs = store.blockSize;
    for (let p = it.start; p < it.start + it.count; p++) {
      const blk = it.blockTable[Math.floor(p / bs)]!;
      for (let l = 0; l < L; l++) {
        for (let h = 0; h < H; h++) {
          const src = (h * c.len + p) * Dh;
          const dst = store.offset(blk, h, p % bs);
          store.k[l]!.set(c.keys[l]!.subarray(src, src + Dh), dst);
          store.v[l]!.set(c.values[l]!.subarray(src, src + Dh), dst);
        }
      }
    }
  }

  release(seqId: number): void {
    this.caches.delete(seqId);
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
