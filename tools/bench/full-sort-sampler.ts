/**
 * The sampler before issue 11: every finite logit sorted per token, then top-k, then top-p over
 * the sorted list. Kept as the reference twice over: the sampling test asserts the partial-
 * selection sampler picks exactly what this picks, and `bench:sampling` times ours against it.
 */
import type { Prng } from '../../backend/engine/sampling.js';
import { sortedIds } from '../../backend/engine/top-candidates.js';

export function fullSortSample(
  logits: Float32Array,
  temperature: number,
  topK: number,
  topP: number,
  rng: Prng,
): number {
  const idx = sortedIds(logits);
  const k = topK > 0 ? Math.min(topK, idx.length) : idx.length;
  const maxL = logits[idx[0]!]!;
  const probs: number[] = [];
  let sum = 0;
  for (let i = 0; i < k; i++) {
    const p = Math.exp((logits[idx[i]!]! - maxL) / temperature);
    probs.push(p);
    sum += p;
  }
  let keep = k;
  if (topP < 1) {
    let acc = 0;
    for (let i = 0; i < k; i++) {
      acc += probs[i]!;
      if (acc >= topP * sum) {
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
