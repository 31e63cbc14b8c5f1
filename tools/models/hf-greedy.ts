/**
 * The greedy loop a user writes over their export with onnxruntime-node, no engine: a static
 * batch of equal-length prompts prefilled in one run, then one run per token, each step's
 * `present` fed back as the next past. The reference of the tests (tokens) and of the bench
 * `hf_export_32_vs_static` (tokens per second).
 */
import { performance } from 'node:perf_hooks';
import { createSession, tensorBool, tensorI64 } from '../../backend/onnx/ort.js';
import type { OrtSession, OrtTensorInput } from '../../backend/onnx/ort.js';

/** Half float bits → value (for an fp16 graph's logits). */
function halfValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac === 0 ? sign * Infinity : NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** What one loop did. */
export interface GreedyResult {
  /** Generated ids per row. */
  readonly tokens: number[][];
  /** Wall time of the whole loop (prefill included), ms. */
  readonly ms: number;
  /** Wall time of the decode steps alone, ms. */
  readonly decodeMs: number;
}

/** Runs `prompts` (all the same length) for `steps` tokens on an open session. */
export async function greedyLoop(
  s: OrtSession,
  numLayers: number,
  prompts: readonly (readonly number[])[],
  steps: number,
): Promise<GreedyResult> {
  const B = prompts.length;
  const T0 = prompts[0]!.length;
  if (prompts.some((p) => p.length !== T0)) throw new Error('greedyLoop: a static batch needs equal-length prompts');
  const half = s.valueTypes['past_key_values.0.key'] === 'float16';
  const shape = pastShape(s);
  let past: Record<string, OrtTensorInput> = {};
  for (let l = 0; l < numLayers; l++) {
    for (const kv of ['key', 'value']) {
      const dims = [B, shape.heads, 0, shape.headDim];
      past[`past_key_values.${l}.${kv}`] = half
        ? { type: 'float16', data: new Uint16Array(0), dims }
        : { type: 'float32', data: new Float32Array(0), dims };
    }
  }
  const tokens: number[][] = prompts.map(() => []);
  let ids = prompts.flat();
  let len = 0;
  const t0 = performance.now();
  let tDecode = t0;
  for (let step = 0; step < steps; step++) {
    const T = step === 0 ? T0 : 1;
    const S = len + T;
    const feeds: Record<string, OrtTensorInput> = {
      input_ids: tensorI64(BigInt64Array.from(ids, BigInt), [B, T]),
      attention_mask: tensorI64(new BigInt64Array(B * S).fill(1n), [B, S]),
      ...past,
    };
    if (s.inputNames.includes('position_ids')) {
      const pos = new BigInt64Array(B * T);
      for (let b = 0; b < B; b++) for (let t = 0; t < T; t++) pos[b * T + t] = BigInt(len + t);
      feeds.position_ids = tensorI64(pos, [B, T]);
    }
    if (s.inputNames.includes('use_cache_branch'))
      feeds.use_cache_branch = tensorBool(Uint8Array.of(len > 0 ? 1 : 0), [1]);
    const r = await s.run(feeds);
    past = {};
    for (let l = 0; l < numLayers; l++) {
      past[`past_key_values.${l}.key`] = r[`present.${l}.key`] as OrtTensorInput;
      past[`past_key_values.${l}.value`] = r[`present.${l}.value`] as OrtTensorInput;
    }
    const logits = r.logits!;
    const V = logits.dims[2]!;
    ids = [];
    for (let b = 0; b < B; b++) {
      const base = (b * T + T - 1) * V;
      let best = 0;
      let bestV = -Infinity;
      for (let v = 0; v < V; v++) {
        const raw = logits.data[base + v] as number;
        const x = half ? halfValue(raw) : raw;
        if (x > bestV) [best, bestV] = [v, x];
      }
      tokens[b]!.push(best);
      ids.push(best);
    }
    len = S;
    if (step === 0) tDecode = performance.now();
  }
  const end = performance.now();
  return { tokens, ms: end - t0, decodeMs: end - tDecode };
}

/** The K/V heads and head size the graph declares for its past (fixed dims of `past_key_values.0.key`). */
function pastShape(s: OrtSession): { heads: number; headDim: number } {
  const dims = s.inputDims['past_key_values.0.key'];
  const heads = dims?.[1];
  const headDim = dims?.[3];
  if (typeof heads !== 'number' || typeof headDim !== 'number')
    throw new Error('greedyLoop: past_key_values.0.key has no fixed heads and head size');
  return { heads, headDim };
}

/** Opens `file` (1 thread), runs greedyLoop, closes it. */
export async function greedyFile(
  file: string,
  numLayers: number,
  prompts: readonly (readonly number[])[],
  steps: number,
): Promise<GreedyResult> {
  const s = await createSession(file, { threads: 1 });
  try {
    return await greedyLoop(s, numLayers, prompts, steps);
  } finally {
    await s.release();
  }
}
