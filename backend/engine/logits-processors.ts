/**
 * The per-request logits processors that change the distribution before sampling, in vLLM v1's
 * order: bans (suppressed ids; EOS and stop ids before min_tokens) and `logit_bias`, then the
 * penalties with Hugging Face / vLLM semantics — `repetition_penalty` over the tokens of prompt
 * and output (a positive logit is divided by it, a negative one multiplied), `frequency_penalty`
 * per occurrence in the output and `presence_penalty` once per distinct output token.
 */
import type { SamplingParams } from './sampling.js';

/** Token counts of one sequence, folded incrementally from its token list. */
export class PenaltyState {
  /** Occurrences of each id in the output. */
  readonly outputCounts = new Map<number, number>();
  /** Every id of prompt and output (the repetition penalty's set). */
  readonly seen = new Set<number>();
  private folded = 0;

  constructor(private readonly promptLen: number) {}

  /** Folds the tokens appended since the last call (several at once after a multi-token step). */
  update(tokens: readonly number[]): void {
    for (let i = this.folded; i < tokens.length; i++) {
      const t = tokens[i]!;
      this.seen.add(t);
      if (i >= this.promptLen) this.outputCounts.set(t, (this.outputCounts.get(t) ?? 0) + 1);
    }
    this.folded = tokens.length;
  }
}

/** The largest finite float32: a penalised logit is clamped to ±this. */
const F32_MAX = 3.4028234663852886e38;

/** True when any penalty of `p` is on (the sequence then keeps a PenaltyState). */
export function hasPenalties(p: SamplingParams): boolean {
  return p.presencePenalty !== 0 || p.frequencyPenalty !== 0 || p.repetitionPenalty !== 1;
}

/**
 * Applies bans, logit bias and penalties to `logits` in place (a buffer the caller owns);
 * `state` is required when `hasPenalties(p)`.
 */
export function processLogits(
  logits: Float32Array,
  p: SamplingParams,
  banned: readonly number[],
  state: PenaltyState | undefined,
): void {
  const V = logits.length;
  for (const b of banned) if (b < V) logits[b] = -Infinity;
  for (let i = 0; i < p.logitBiasIds.length; i++) {
    const id = p.logitBiasIds[i]!;
    if (id < V) logits[id] = logits[id]! + p.logitBiasValues[i]!;
  }
  if (state === undefined) return;
  const rp = p.repetitionPenalty;
  if (rp !== 1) {
    for (const id of state.seen) {
      if (id >= V) continue;
      const l = logits[id]!;
      // A tiny penalty overflows float32 (4 / 1e-300 is +Infinity): the sampler's softmax then
      // made NaN of every weight and picked the row's last id (PAD), every step. Clamped, the
      // seen ids with a positive logit share the mass, the limit the penalty tends to. The
      // negative side is not clamped: a banned id (-Infinity) must stay banned, not -F32_MAX.
      logits[id] = l > 0 ? Math.min(l / rp, F32_MAX) : l * rp;
    }
  }
  if (p.frequencyPenalty !== 0 || p.presencePenalty !== 0) {
    for (const [id, n] of state.outputCounts) {
      if (id < V) logits[id] = logits[id]! - p.frequencyPenalty * n - p.presencePenalty;
    }
  }
}
