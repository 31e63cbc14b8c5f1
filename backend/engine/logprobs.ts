/**
 * Logprobs of a sampled token: the log-softmax of the processed logits (after bans, logit_bias
 * and penalties; before temperature, min_p, top-k and top-p), the chosen token's value and the
 * k most likely ids. vLLM returns the raw model's log-softmax by default (`raw_logprobs`); the
 * two agree unless a processor changed the row. -Infinity (a banned id) is sent as -9999, the
 * floor vLLM's API answers with, so it survives JSON.
 */
import type { GenTokenLogprobs } from '../../schema/engine-ipc.js';
import { topKIds } from './top-candidates.js';

/** The floor of a logprob on the wire. */
export const LOGPROB_FLOOR = -9999;

const clamp = (x: number): number => (x > LOGPROB_FLOOR ? x : LOGPROB_FLOOR);

/** Logprobs of `token` and the `k` best ids of `logits` (read only). O(V log k). */
export function tokenLogprobs(logits: Float32Array, token: number, k: number): GenTokenLogprobs {
  let m = -Infinity;
  for (let i = 0; i < logits.length; i++) if (logits[i]! > m) m = logits[i]!;
  let z = 0;
  for (let i = 0; i < logits.length; i++) {
    const l = logits[i]!;
    if (l !== -Infinity) z += Math.exp(l - m);
  }
  // (l - m) - log z, not l - (m + log z): at a huge m (a tiny repetition_penalty's clamped
  // logits) m + log z rounds to m, and two tied ids each came out at logprob 0.
  const lz = Math.log(z);
  const lp = (id: number): number => clamp(logits[id]! - m - lz);
  const top = k > 0 ? Array.from(topKIds(logits, k), (id) => ({ id, logprob: lp(id) })) : [];
  return { id: token, logprob: lp(token), top };
}
