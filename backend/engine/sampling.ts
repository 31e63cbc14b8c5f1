/**
 * Sampling parameters resolved with defaults, a seeded PRNG per sequence, and the sampler:
 * greedy at temperature 0, otherwise temperature, min-p, top-k and top-p over a softmax.
 */
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import { MAX_SEED } from '../../schema/sampling-params-check.js';
import { topKIds } from './top-candidates.js';

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
  /** Keeps tokens whose probability is at least minP times the best one's (0 = off). */
  readonly minP: number;
  /** Subtracted once from the logit of every token the output already holds (0 = off). */
  readonly presencePenalty: number;
  /** Subtracted per occurrence in the output (0 = off). */
  readonly frequencyPenalty: number;
  /** Divides positive / multiplies negative logits of tokens in prompt or output (1 = off). */
  readonly repetitionPenalty: number;
  /** Added to the logits of these ids (ids and biases in the same order). */
  readonly logitBiasIds: readonly number[];
  readonly logitBiasValues: readonly number[];
  /** Top logprobs per sampled token to return; undefined = no logprobs at all. */
  readonly logprobs: number | undefined;
  /** Keep the matched stop string (or stop token's text) in the output text. */
  readonly includeStopStrInOutput: boolean;
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
    minP: p.min_p ?? 0,
    presencePenalty: p.presence_penalty ?? 0,
    frequencyPenalty: p.frequency_penalty ?? 0,
    repetitionPenalty: p.repetition_penalty ?? 1,
    logitBiasIds: Object.freeze(Object.keys(p.logit_bias ?? {}).map(Number)),
    logitBiasValues: Object.freeze(Object.values(p.logit_bias ?? {})),
    logprobs: p.logprobs,
    includeStopStrInOutput: p.include_stop_str_in_output ?? false,
  });
}

const TWO_32 = 4294967296;

/** murmur3's 32-bit finalizer: a bijection with good avalanche, so distinct high halves stay distinct. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * A small, fast, seedable PRNG returning floats in [0, 1): mulberry32 over the seed's low 32
 * bits, keyed by its high bits. Below 2^32 it is mulberry32 exactly, so those seeds keep the
 * samples they always gave; above, a second Weyl counter started at the high half is mixed into
 * every draw, so the state holds the whole seed (it kept only the low half: seed 2^32 + 1 drew
 * as seed 1). Two 32-bit halves rather than a 64-bit generator: no BigInt on the sampling path.
 */
export class Prng {
  private lo: number;
  private hi: number;
  private readonly keyed: boolean;

  /** `seed`: an integer in [0, MAX_SEED]; `offset` is added to it exactly (an n > 1 request's child index). */
  constructor(seed: number, offset = 0) {
    let lo = (seed % TWO_32) + offset;
    let hi = Math.floor(seed / TWO_32);
    // seed + offset as a double rounds past 2^53 (children 1 and 2 of MAX_SEED would share a stream): carry by hand.
    if (lo >= TWO_32) {
      lo -= TWO_32;
      hi += 1;
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
    this.keyed = this.hi !== 0;
  }

  next(): number {
    let t = (this.lo = (this.lo + 0x6d2b79f5) | 0);
    if (this.keyed) {
      // The high counter moves too: with a fixed key, two seeds whose low halves and keys each
      // differed in bit 31 alone would draw alike forever (adding to bit 31 never carries).
      this.hi = (this.hi + 0x9e3779b9) | 0;
      t ^= fmix32(this.hi);
    }
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/**
 * A PRNG for child `index` of a request: its stream is seed + index's (vLLM's rule, so choice 1
 * of seed s samples as choice 0 of seed s + 1). Without a seed, 53 random bits from Math.random
 * (32 let two unseeded requests share a stream about once in 4 billion pairs).
 */
export function prngFor(seed: number | undefined, index = 0): Prng {
  return seed === undefined ? new Prng(Math.floor(Math.random() * (MAX_SEED + 1))) : new Prng(seed, index);
}

/** What `sampleToken` returns when no id can be picked: every logit is -Infinity or NaN. */
export const NO_TOKEN = -1;

/** Index of the largest logit (the first one on ties); NO_TOKEN when none is above -Infinity (NaN never wins). */
export function argmax(logits: Float32Array): number {
  let best = NO_TOKEN;
  let bestV = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]!;
    if (v > bestV) {
      bestV = v;
      best = i;
    }
  }
  return best;
}

/** True when a logit is NaN (vLLM's VLLM_COMPUTE_NANS_IN_LOGITS scan; only engines with it on call this). */
export function hasNaN(logits: Float32Array): boolean {
  for (let i = 0; i < logits.length; i++) if (Number.isNaN(logits[i])) return true;
  return false;
}

/**
 * Picks the next token; `banned` ids (the model's suppressed ids; EOS and stop ids before
 * min_tokens) never win. Writes -Infinity into `logits` at the banned ids, so pass a buffer the
 * caller owns. Greedy at temperature 0; otherwise min_p (a threshold relative to the best
 * token), top-k (partial selection) and top-p (over a candidate set that grows until it holds
 * the mass), never a sort of the whole vocabulary. NO_TOKEN when every id is banned or NaN.
 */
export function sampleToken(
  logits: Float32Array,
  params: SamplingParams,
  rng: Prng,
  banned: readonly number[],
): number {
  for (const b of banned) if (b < logits.length) logits[b] = -Infinity;
  const best = argmax(logits);
  if (params.temperature === 0 || best === NO_TOKEN) return best;
  const t = params.temperature;
  const maxL = logits[best]!;
  // min_p keeps p_i >= min_p * p_max, i.e. logit_i / T >= max / T + ln(min_p).
  const floor = params.minP > 0 ? maxL + t * Math.log(params.minP) : -Infinity;
  if (params.topK === 0 && params.topP >= 1) return sampleAll(logits, t, maxL, floor, rng);
  const V = logits.length;
  if (params.topK > 0) {
    const ids = topKIds(logits, params.topK, floor);
    const probs = probsOf(logits, ids, t, maxL);
    return nucleus(ids, probs, sumOf(probs), params.topP, rng);
  }
  // top_p alone: the candidates must hold top_p of the whole (min_p-kept) mass; if not, widen.
  const total = massAbove(logits, t, maxL, floor);
  for (let k = Math.min(CANDIDATES, V); ; k = Math.min(V, k * 4)) {
    const ids = topKIds(logits, k, floor);
    const probs = probsOf(logits, ids, t, maxL);
    if (ids.length < k || k === V || sumOf(probs) >= params.topP * total)
      return nucleus(ids, probs, total, params.topP, rng);
  }
}

function probsOf(logits: Float32Array, ids: Int32Array, t: number, maxL: number): Float64Array {
  const probs = new Float64Array(ids.length);
  for (let i = 0; i < ids.length; i++) probs[i] = Math.exp((logits[ids[i]!]! - maxL) / t);
  return probs;
}

function sumOf(xs: Float64Array): number {
  let s = 0;
  for (const x of xs) s += x;
  return s;
}

/** First candidate set of top_p without top_k (widened x4 until it holds the mass). */
const CANDIDATES = 64;

/** Sum of exp((l - max) / T) over ids at or above the floor. */
function massAbove(logits: Float32Array, t: number, maxL: number, floor: number): number {
  let s = 0;
  for (let i = 0; i < logits.length; i++) {
    const l = logits[i]!;
    if (l !== -Infinity && l >= floor) s += Math.exp((l - maxL) / t);
  }
  return s;
}

/** Samples over the whole row (no truncation but the floor), in id order: O(V), no sort. */
function sampleAll(logits: Float32Array, t: number, maxL: number, floor: number, rng: Prng): number {
  let r = rng.next() * massAbove(logits, t, maxL, floor);
  let last = -1;
  for (let i = 0; i < logits.length; i++) {
    const l = logits[i]!;
    if (l === -Infinity || l < floor) continue;
    last = i;
    r -= Math.exp((l - maxL) / t);
    if (r < 0) return i;
  }
  return last;
}

/**
 * Nucleus over candidates sorted largest first: the smallest head whose mass reaches top_p of
 * `total` (the candidates' own sum, or the whole row's when they were a prefix of it).
 */
function nucleus(ids: Int32Array, probs: Float64Array, total: number, topP: number, rng: Prng): number {
  let keep = ids.length;
  let mass = 0;
  if (topP < 1) {
    for (let i = 0; i < ids.length; i++) {
      mass += probs[i]!;
      if (mass >= topP * total) {
        keep = i + 1;
        break;
      }
    }
  }
  mass = 0;
  for (let i = 0; i < keep; i++) mass += probs[i]!;
  let r = rng.next() * mass;
  for (let i = 0; i < keep; i++) {
    r -= probs[i]!;
    if (r < 0) return ids[i]!;
  }
  return ids[keep - 1]!;
}
