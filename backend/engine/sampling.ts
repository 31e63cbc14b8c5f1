/**
 * Sampling parameters resolved with defaults, a seeded PRNG per sequence, and the sampler:
 * greedy at temperature 0, otherwise temperature, top-k and top-p over a softmax.
 */
import type { GenSamplingParams } from '../../schema/engine-ipc.js';

/** Sampling parameters with every default filled in. */
export interface SamplingParams {
  readonly maxTokens: number;
  readonly temperature: number;
  readonly topP: number;
  /** 0 = off. */
  readonly topK: number;
  readonly seed: number | undefined;
  readonly n: number;
  readonly stop: readonly string[];
  /** Sampling past EOS: EOS ids no longer stop the sequence (they are not banned). */
  readonly ignoreEos: boolean;
  /** Ids that finish the sequence with `stop` (the id is the stop reason), ignore_eos or not. */
  readonly stopTokenIds: readonly number[];
  /** Outputs before any stop applies; EOS and stop ids are banned until then. */
  readonly minTokens: number;
}

/** Defaults follow OpenAI's completions API (max_tokens 16, temperature 1). */
export function resolveSamplingParams(p: GenSamplingParams = {}): SamplingParams {
  return Object.freeze({
    maxTokens: p.max_tokens ?? 16,
    temperature: p.temperature ?? 1,
    topP: p.top_p ?? 1,
    topK: p.top_k === undefined || p.top_k < 0 ? 0 : p.top_k,
    seed: p.seed,
    n: p.n ?? 1,
    stop: Object.freeze([...(p.stop ?? [])]),
    ignoreEos: p.ignore_eos ?? false,
    stopTokenIds: Object.freeze([...(p.stop_token_ids ?? [])]),
    minTokens: p.min_tokens ?? 0,
  });
}

/** A small, fast, seedable PRNG (mulberry32) returning floats in [0, 1). */
export class Prng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) | 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/** A PRNG for one sequence: seeded when the request gives a seed, else from Math.random. */
export function prngFor(seed: number | undefined): Prng {
  return new Prng(seed ?? Math.floor(Math.random() * 4294967296));
}

/** Index of the largest logit (the first one on ties). */
export function argmax(logits: Float32Array): number {
  let best = 0;
  let bestV = logits[0]!;
  for (let i = 1; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > bestV) {
      bestV = v;
      best = i;
    }
  }
  return best;
}

/**
 * Picks the next token; `banned` ids (the model's suppressed ids; EOS and stop ids before
 * min_tokens) never win. Writes
 * -Infinity into `logits` at the banned ids, so pass a buffer the caller owns.
 */
export function sampleToken(logits: Float32Array, params: SamplingParams, rng: Prng, banned: readonly number[]): number {
  for (const b of banned) if (b < logits.length) logits[b] = -Infinity;
  if (params.temperature === 0) return argmax(logits);
  const V = logits.length;
  const idx: number[] = [];
  for (let i = 0; i < V; i++) if (logits[i] !== -Infinity) idx.push(i);
  idx.sort((x, y) => logits[y]! - logits[x]! || x - y);
  const k = params.topK > 0 ? Math.min(params.topK, idx.length) : idx.length;
  const maxL = logits[idx[0]!]! / params.temperature;
  const probs: number[] = [];
  let sum = 0;
  for (let i = 0; i < k; i++) {
    const p = Math.exp(logits[idx[i]!]! / params.temperature - maxL);
    probs.push(p);
    sum += p;
  }
  // Nucleus: the smallest head of the sorted list whose mass reaches top_p.
  let keep = k;
  if (params.topP < 1) {
    let acc = 0;
    for (let i = 0; i < k; i++) {
      acc += probs[i]! / sum;
      if (acc >= params.topP) {
        keep = i + 1;
        break;
      }
    }
  }
  let mass = 0;
  for (let i = 0; i < keep; i++) mass += probs[i]!;
  let r = rng.next() * mass;
  for (let i = 0; i < keep; i++) {
    r -= probs[i]!;
    if (r < 0) return idx[i]!;
  }
  return idx[keep - 1]!;
}
