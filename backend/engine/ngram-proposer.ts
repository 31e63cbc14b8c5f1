/**
 * vLLM's `ngram` proposer (prompt lookup decoding): the drafts for a sequence are the tokens that
 * followed an earlier occurrence of its last n tokens, for the longest n from promptLookupMax
 * down to promptLookupMin that occurs earlier; among occurrences of that n-gram the earliest wins
 * (vLLM's KMP search keeps the first match). No model runs: the context is the draft model.
 */
import type { NgramSpeculativeConfig } from '../../schema/speculative-config.js';

const NO_DRAFTS: readonly number[] = Object.freeze([]);

/** Proposes drafts from a sequence's own tokens. */
export class NgramProposer {
  constructor(private readonly cfg: NgramSpeculativeConfig) {}

  /**
   * Up to `k` drafts continuing `tokens` (the context, prompt and output), or none when no
   * suffix n-gram occurs earlier. The drafts may run into the suffix itself (a cycle shorter
   * than k continues through the context's end, as in vLLM).
   */
  propose(tokens: readonly number[], k: number): readonly number[] {
    const L = tokens.length;
    if (k <= 0) return NO_DRAFTS;
    for (let n = Math.min(this.cfg.promptLookupMax, L - 1); n >= this.cfg.promptLookupMin; n--) {
      const suffix = L - n;
      // An occurrence at s must end before the suffix's last token so a token follows it.
      for (let s = 0; s + n < L; s++) {
        let j = 0;
        while (j < n && tokens[s + j] === tokens[suffix + j]) j++;
        if (j < n) continue;
        const from = s + n;
        return tokens.slice(from, Math.min(from + k, L));
      }
    }
    return NO_DRAFTS;
  }
}
