/**
 * A request that leaves the sampler no token: the frontend refuses it before a stream answers
 * 200, the engine again at admission (a request may come without the frontend, offline). One
 * rule and one message for both sides.
 */

/**
 * True when `banned` holds every id of a `vocabSize` vocabulary: the sampler would have no
 * token to pick. `banned` must hold each id once (ids outside the vocabulary are ignored).
 */
export function bansEveryToken(banned: Iterable<number>, vocabSize: number): boolean {
  let inVocab = 0;
  for (const id of banned) if (id >= 0 && id < vocabSize) inVocab++;
  return inVocab >= vocabSize;
}

/** The refusal of a request whose stop_token_ids, with EOS and suppressed ids, ban every token before min_tokens. */
export function minTokensBanMessage(vocabSize: number, minTokens: number): string {
  return `stop_token_ids with the model's EOS and suppressed ids cover all ${vocabSize} token ids, so nothing could be sampled before min_tokens (${minTokens}); leave at least one id out`;
}
