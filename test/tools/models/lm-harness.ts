/**
 * Test harness for the tiny LM: per-row K/V caches kept in JS ([H, len, Dh] per layer) and
 * feed builders for both layouts, so tests can compare cached decoding with full runs.
 */
import type { OrtSession, OrtTensorInput } from '../../../backend/onnx/ort.js';
import { tensorF32, tensorI64 } from '../../../backend/onnx/ort.js';
import {
  FAST_NAMES,
  HEAD_DIM,
  HF_NAMES,
  MASK_VALUE,
  NUM_HEADS,
  NUM_LAYERS,
  PAD_ID,
  VOCAB_SIZE,
} from '../../../tools/models/tiny-lm-spec.js';

const H = NUM_HEADS;
const DH = HEAD_DIM;

/** One sequence's cache: per layer K and V laid out [H, len, Dh]. */
export interface RowCache {
  len: number;
  keys: Float32Array[];
  values: Float32Array[];
}

/** An empty cache. */
export function emptyCache(): RowCache {
  return {
    len: 0,
    keys: Array.from({ length: NUM_LAYERS }, () => new Float32Array(0)),
    values: Array.from({ length: NUM_LAYERS }, () => new Float32Array(0)),
  };
}

/** Appends `t` tokens' K/V ([H, t, Dh], taken from row `row` of a [B,H,t,Dh] output). */
export function appendKv(
  c: RowCache,
  newK: readonly Float32Array[],
  newV: readonly Float32Array[],
  t: number,
  row = 0,
): void {
  const len = c.len + t;
  const grow = (old: Float32Array, add: Float32Array): Float32Array => {
    const out = new Float32Array(H * len * DH);
    for (let h = 0; h < H; h++) {
      out.set(old.subarray(h * c.len * DH, (h + 1) * c.len * DH), h * len * DH);
      const src = (row * H + h) * t * DH;
      out.set(add.subarray(src, src + t * DH), h * len * DH + c.len * DH);
    }
    return out;
  };
  for (let l = 0; l < NUM_LAYERS; l++) {
    c.keys[l] = grow(c.keys[l]!, newK[l]!);
    c.values[l] = grow(c.values[l]!, newV[l]!);
  }
  c.len = len;
}

/** Copies row caches into one [B,H,P,Dh] buffer; `placeLeft` puts each row's past at the end (left padding). */
function batchPast(
  caches: readonly RowCache[],
  P: number,
  pick: (c: RowCache) => Float32Array,
  placeLeft: boolean,
): Float32Array {
  const out = new Float32Array(caches.length * H * P * DH).fill(7.5); // garbage in unused slots: must be masked
  caches.forEach((c, b) => {
    const src = pick(c);
    const off = placeLeft ? P - c.len : 0;
    for (let h = 0; h < H; h++)
      out.set(src.subarray(h * c.len * DH, (h + 1) * c.len * DH), ((b * H + h) * P + off) * DH);
  });
  return out;
}

/** Output of one run, split per row. */
export interface StepResult {
  /** Per row: logits of the last position (fast) or of every new position [T*V] (hf). */
  readonly logits: Float32Array[];
  /** Per layer, the new tokens' K/V as [B,H,T,Dh] (hf: sliced out of present). */
  readonly newK: Float32Array[];
  readonly newV: Float32Array[];
  /** hf only: per layer the full present.L.key [B,H,P+T,Dh]. */
  readonly presentK?: Float32Array[];
}

/**
 * Runs the fast layout; pasts right-padded to the longest, rows with fewer new tokens
 * LEFT-padded with PAD (masked for every real query; a pad query sees only itself) so the
 * last position of every row is a real token.
 */
export async function runFast(
  s: OrtSession,
  rows: readonly number[][],
  caches: readonly RowCache[],
): Promise<StepResult> {
  const n = FAST_NAMES;
  const B = rows.length;
  const T = Math.max(...rows.map((r) => r.length));
  const P = Math.max(...caches.map((c) => c.len));
  const S = P + T;
  const bias = new Float32Array(B * T * S);
  const ids = new BigInt64Array(B * T);
  const pos = new BigInt64Array(B * T);
  for (let b = 0; b < B; b++) {
    const p = caches[b]!.len;
    const z = T - rows[b]!.length; // left padding of this row
    for (let i = 0; i < T; i++) {
      const real = i >= z;
      ids[b * T + i] = BigInt(real ? rows[b]![i - z]! : PAD_ID);
      pos[b * T + i] = BigInt(real ? p + i - z : 0);
      for (let j = 0; j < S; j++) {
        const ok = real ? j < p || (j >= P + z && j - P <= i) : j === P + i;
        bias[(b * T + i) * S + j] = ok ? 0 : MASK_VALUE;
      }
    }
  }
  const feeds: Record<string, OrtTensorInput> = {
    [n.inputIds]: tensorI64(ids, [B, T]),
    [n.positionIds]: tensorI64(pos, [B, T]),
    [n.attnBias]: tensorF32(bias, [B, 1, T, S]),
    [n.numLogits]: tensorI64(BigInt64Array.of(1n), [1]),
  };
  for (let l = 0; l < NUM_LAYERS; l++) {
    feeds[n.pastKey(l)] = tensorF32(
      batchPast(caches, P, (c) => c.keys[l]!, false),
      [B, H, P, DH],
    );
    feeds[n.pastValue(l)] = tensorF32(
      batchPast(caches, P, (c) => c.values[l]!, false),
      [B, H, P, DH],
    );
  }
  const out = await s.run(feeds);
  const logits = out[n.logits]!.data as Float32Array;
  return {
    logits: Array.from({ length: B }, (_, b) => logits.slice(b * VOCAB_SIZE, (b + 1) * VOCAB_SIZE)),
    newK: Array.from({ length: NUM_LAYERS }, (_, l) => out[n.newKey(l)]!.data as Float32Array),
    newV: Array.from({ length: NUM_LAYERS }, (_, l) => out[n.newValue(l)]!.data as Float32Array),
  };
}

/** Takes the last `t` slots of a [B,H,S,Dh] present tensor as [B,H,t,Dh]. */
function tail(present: Float32Array, B: number, S: number, t: number): Float32Array {
  const out = new Float32Array(B * H * t * DH);
  for (let bh = 0; bh < B * H; bh++) out.set(present.subarray((bh * S + S - t) * DH, (bh * S + S) * DH), bh * t * DH);
  return out;
}

/** Runs the usual layout; pasts left-padded to the longest, masked by attention_mask. */
export async function runHf(
  s: OrtSession,
  rows: readonly number[][],
  caches: readonly RowCache[],
): Promise<StepResult> {
  const n = HF_NAMES;
  const B = rows.length;
  const T = rows[0]!.length;
  const P = Math.max(...caches.map((c) => c.len));
  const S = P + T;
  const ids = new BigInt64Array(B * T);
  const pos = new BigInt64Array(B * T);
  const mask = new BigInt64Array(B * S);
  for (let b = 0; b < B; b++) {
    const p = caches[b]!.len;
    for (let i = 0; i < T; i++) {
      ids[b * T + i] = BigInt(rows[b]![i]!);
      pos[b * T + i] = BigInt(p + i);
    }
    for (let j = 0; j < S; j++) mask[b * S + j] = j >= P - p ? 1n : 0n;
  }
  const feeds: Record<string, OrtTensorInput> = {
    [n.inputIds]: tensorI64(ids, [B, T]),
    [n.attentionMask]: tensorI64(mask, [B, S]),
    [n.positionIds]: tensorI64(pos, [B, T]),
  };
  for (let l = 0; l < NUM_LAYERS; l++) {
    feeds[n.pastKey(l)] = tensorF32(
      batchPast(caches, P, (c) => c.keys[l]!, true),
      [B, H, P, DH],
    );
    feeds[n.pastValue(l)] = tensorF32(
      batchPast(caches, P, (c) => c.values[l]!, true),
      [B, H, P, DH],
    );
  }
  const out = await s.run(feeds);
  const logits = out[n.logits]!.data as Float32Array;
  return {
    logits: Array.from({ length: B }, (_, b) => logits.slice(b * T * VOCAB_SIZE, (b + 1) * T * VOCAB_SIZE)),
    newK: Array.from({ length: NUM_LAYERS }, (_, l) => tail(out[n.presentKey(l)]!.data as Float32Array, B, S, T)),
    newV: Array.from({ length: NUM_LAYERS }, (_, l) => tail(out[n.presentValue(l)]!.data as Float32Array, B, S, T)),
    presentK: Array.from({ length: NUM_LAYERS }, (_, l) => out[n.presentKey(l)]!.data as Float32Array),
  };
}

/** Largest absolute elementwise difference (Infinity on a length mismatch). */
export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

/** Index of the largest value. */
export function argmax(a: Float32Array): number {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i]! > a[best]!) best = i;
  return best;
}
