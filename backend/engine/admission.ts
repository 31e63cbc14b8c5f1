/**
 * Admission of a request to the engine: the checks `EngineCore.addRequest` makes before it queues
 * anything, so a request that can never run is refused at the door (RequestRejected) instead of
 * failing mid-step inside a batch it shares with other requests.
 */
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import { samplingParamsProblems } from '../../schema/sampling-params-check.js';
import { bansEveryToken, minTokensBanMessage } from '../../schema/vocab-bans.js';
import type { EngineConfig } from './config.js';
import type { KvCacheManager } from './kv-cache-manager.js';
import { rowCapacityFor } from './kv-cache-manager.js';
import type { SamplingParams } from './sampling.js';
import { resolveSamplingParams } from './sampling.js';
import type { StopRule } from './stopping.js';
import { stopRuleFor } from './stopping.js';
import type { EngineTokenizer } from './tokenizer.js';

/** A request the engine cannot take (bad prompt, too long, duplicate id). */
export class RequestRejected extends Error {}

/** An admitted request: its prompt ids, resolved sampling params and stop rule. */
export interface Admitted {
  readonly ids: number[];
  readonly sp: SamplingParams;
  readonly stopRule: StopRule;
}

/** Checks a request against the model, the KV pool and the row budget; throws RequestRejected when it can never run. */
export function admitRequest(
  config: EngineConfig,
  kv: KvCacheManager,
  tokenizer: EngineTokenizer,
  prompt: string | readonly number[],
  params: GenSamplingParams,
): Admitted {
  // The worker's add was decoded already; LLM.generate's params were not (max_tokens 0 gave a token).
  const problems = samplingParamsProblems(params);
  if (problems.length > 0) throw new RequestRejected(`invalid sampling params: ${problems.join('; ')}`);
  const ids = typeof prompt === 'string' ? tokenizer.encode(prompt) : [...prompt];
  const m = config.model;
  if (ids.length === 0) throw new RequestRejected('the prompt is empty');
  for (const t of ids)
    if (!Number.isInteger(t) || t < 0 || t >= m.vocabSize)
      throw new RequestRejected(`token id ${t} is outside the vocabulary (0..${m.vocabSize - 1})`);
  if (ids.length >= config.maxModelLen) {
    throw new RequestRejected(
      `the prompt has ${ids.length} tokens; this model accepts at most ${config.maxModelLen - 1} so one can be generated`,
    );
  }
  const sp = resolveSamplingParams(params);
  const longest = Math.min(ids.length + sp.maxTokens, config.maxModelLen);
  if (kv.blocksFor(longest) > config.numBlocks) {
    throw new RequestRejected(
      `${longest} tokens need ${kv.blocksFor(longest)} KV blocks; the pool has ${config.numBlocks}`,
    );
  }
  const row = rowCapacityFor(longest, kv.rows);
  if (row > config.numRowTokens) {
    throw new RequestRejected(
      `${longest} tokens need a working row of ${row} positions; the KV budget leaves rows ${config.numRowTokens}`,
    );
  }
  const stopRule = stopRuleFor(config, sp);
  // Refused here, not found mid-step: a sequence with nothing left to sample would poison the
  // batched run it shares with every other request of this engine (stopRuleFor's lists hold each id once).
  if (bansEveryToken(stopRule.bannedLate, m.vocabSize))
    throw new RequestRejected(`the model suppresses every token of its ${m.vocabSize}-token vocabulary`);
  if (sp.minTokens > 0 && bansEveryToken(stopRule.bannedEarly, m.vocabSize)) {
    throw new RequestRejected(minTokensBanMessage(m.vocabSize, sp.minTokens));
  }
  return { ids, sp, stopRule };
}
