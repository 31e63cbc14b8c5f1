/**
 * Verifying speculative drafts, and vLLM's spec-decode counters. One run computed the sequence's
 * last token and its k drafts with logits after each; the verifier samples position by position
 * exactly as plain decoding would (same sampler, same PRNG draws, stopping applied to each token)
 * and keeps going while the sampled token equals the draft. So the output is the one decoding
 * without speculation gives, for greedy and for seeded sampling alike: a draft is accepted with
 * the probability the model gives it (what vLLM's rejection sampler gives for a one-hot draft),
 * and a rejected position yields the token the model sampled there (the "bonus").
 */
import type { SpecDecodingStats } from '../../schema/engine-ipc.js';
import type { Sequence } from './sequence.js';
import { NO_TOKEN } from './sampling.js';

/** What one verify produced. */
export interface VerifyResult {
  /** Tokens appended to the sequence (accepted drafts, then the bonus token unless it stopped first). */
  readonly emitted: number[];
  /** Drafts equal to the token sampled at their position, before the sequence stopped. */
  readonly accepted: number;
  /** True when a position had nothing to sample (every logit -Infinity or NaN): the sequence must fail. */
  readonly unsampled: boolean;
}

/**
 * Samples after the last token and after each draft (`logits`: `(drafts + 1) × vocab` floats)
 * and appends to `seq` until a sample differs from its draft, the drafts run out (the last
 * sample is the bonus token) or the sequence finishes.
 */
export function verifyDrafts(
  seq: Sequence,
  drafts: readonly number[],
  logits: Float32Array,
  vocab: number,
  sample: (logits: Float32Array) => number,
  maxModelLen: number,
): VerifyResult {
  const emitted: number[] = [];
  let accepted = 0;
  for (let j = 0; j <= drafts.length; j++) {
    const token = sample(logits.subarray(j * vocab, (j + 1) * vocab));
    if (token === NO_TOKEN) return { emitted, accepted, unsampled: true }; // nothing samplable: never appended
    seq.append(token, maxModelLen);
    emitted.push(token);
    if (j === drafts.length || token !== drafts[j]) break;
    accepted++;
    if (seq.status !== 'running') break;
  }
  return { emitted, accepted, unsampled: false };
}

/** vLLM's SpecDecodingStats, accumulated between scheduler stats records. */
export class SpecDecodingCounters {
  private drafts = 0;
  private draftTokens = 0;
  private acceptedTokens = 0;
  private perPos: number[];

  constructor(private readonly numSpeculativeTokens: number) {
    this.perPos = new Array<number>(numSpeculativeTokens).fill(0);
  }

  /** One verified draft of `numDraftTokens` tokens of which the first `numAccepted` were accepted. */
  observe(numDraftTokens: number, numAccepted: number): void {
    this.drafts++;
    this.draftTokens += numDraftTokens;
    this.acceptedTokens += numAccepted;
    for (let i = 0; i < numAccepted; i++) this.perPos[i]!++;
  }

  /** The counts since the previous call (deltas), then zero. */
  take(): SpecDecodingStats {
    const s: SpecDecodingStats = {
      numDrafts: this.drafts,
      numDraftTokens: this.draftTokens,
      numAcceptedTokens: this.acceptedTokens,
      numAcceptedTokensPerPos: this.perPos,
    };
    this.drafts = this.draftTokens = this.acceptedTokens = 0;
    this.perPos = new Array<number>(this.numSpeculativeTokens).fill(0);
    return s;
  }
}
