/**
 * Samples a sequence's next token from its logit row: the logits processors (bans, logit_bias,
 * penalties), the logprobs when the request asked for them, then temperature / min_p / top-k /
 * top-p with the sequence's own seeded generator.
 */
import { tokenLogprobs } from './logprobs.js';
import { hasPenalties, PenaltyState, processLogits } from './logits-processors.js';
import { sampleToken } from './sampling.js';
import type { Sequence } from './sequence.js';

/** Penalty counts per sequence, only for requests with a penalty on. */
const penaltyStates = new WeakMap<Sequence, PenaltyState>();

function penaltyStateOf(seq: Sequence): PenaltyState | undefined {
  if (!hasPenalties(seq.params)) return undefined;
  let s = penaltyStates.get(seq);
  if (s === undefined) penaltyStates.set(seq, (s = new PenaltyState(seq.promptLen)));
  s.update(seq.tokens);
  return s;
}

/**
 * The next token of `seq` from `logits` (a buffer the caller owns; it is modified). When the
 * request asked for logprobs they are queued on the sequence for its next output.
 */
export function sampleFor(seq: Sequence, logits: Float32Array): number {
  processLogits(logits, seq.params, seq.banned(), penaltyStateOf(seq));
  const token = sampleToken(logits, seq.params, seq.rng, []);
  const k = seq.params.logprobs;
  if (k !== undefined) seq.logprobs.push(tokenLogprobs(logits, token, k));
  return token;
}
