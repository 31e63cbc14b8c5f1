/**
 * When a sequence stops and which ids it may not sample, as vLLM decides it: the model's EOS
 * ids (a list, like generation_config's `eos_token_id`) stop it unless `ignore_eos`, which
 * samples past them; `stop_token_ids` always stop it (the id is the stop reason); before
 * `min_tokens` outputs no stop applies and EOS and stop ids are banned. BOS and PAD are banned
 * only when the model lists them in `suppressTokens` (PAD is often EOS in exports).
 */
import type { EngineConfig } from './config.js';
import type { SamplingParams } from './sampling.js';

/** One request's stop ids and banned lists, built once at add time. */
export interface StopRule {
  /** EOS ids that stop the sequence (empty with ignore_eos). */
  readonly eosIds: ReadonlySet<number>;
  readonly stopTokenIds: ReadonlySet<number>;
  readonly minTokens: number;
  /** Banned while fewer than minTokens outputs exist: suppressed ids, every EOS id, stop ids. */
  readonly bannedEarly: readonly number[];
  /** Banned afterwards: the model's suppressed ids only. */
  readonly bannedLate: readonly number[];
}

/** The stop rule of a request with params `p` on an engine configured by `cfg`. */
export function stopRuleFor(cfg: EngineConfig, p: SamplingParams): StopRule {
  const late = [...new Set(cfg.suppressTokenIds)];
  const early = p.minTokens > 0 ? [...new Set([...late, ...cfg.eosTokenIds, ...p.stopTokenIds])] : late;
  return Object.freeze({
    eosIds: new Set(p.ignoreEos ? [] : cfg.eosTokenIds),
    stopTokenIds: new Set(p.stopTokenIds),
    minTokens: p.minTokens,
    bannedEarly: Object.freeze(early),
    bannedLate: Object.freeze(late),
  });
}
