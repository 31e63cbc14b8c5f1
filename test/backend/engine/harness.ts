/** Test helpers: build an EngineCore over the fake runner and drain it, collecting per-sequence results. */
import { resolveEngineConfig } from '../../../backend/engine/config.js';
import { EngineCore } from '../../../backend/engine/engine-core.js';
import { ByteTokenizer } from '../../../backend/engine/tokenizer.js';
import type {
  EngineCoreOutputs,
  EngineEvent,
  FinishReason,
  GenSchedulerStats,
  PrefillStats,
} from '../../../schema/engine-ipc.js';
import { FAKE_SPEC, FakeRunner } from './fake-runner.js';

/** Everything one sequence produced across steps. */
export interface SeqResult {
  tokens: number[];
  text: string;
  events: EngineEvent[];
  finishReason?: FinishReason;
  stopReason?: string | number;
  prefill?: PrefillStats;
  numGenerationTokens?: number;
  outputs: number;
}

/** Engine over the fake runner with engine settings `over`. */
export function fakeEngine(over: Record<string, unknown> = {}, eosAt = -1): { engine: EngineCore; runner: FakeRunner } {
  const cfg = resolveEngineConfig({ ...FAKE_SPEC }, { numBlocks: 256, ...over });
  const runner = new FakeRunner(cfg.numBlocks, cfg.blockSize, eosAt);
  const tok = new ByteTokenizer({ bosId: FAKE_SPEC.bosId, eosId: FAKE_SPEC.eosId, padId: FAKE_SPEC.padId });
  return { engine: new EngineCore(cfg, runner, tok), runner };
}

/** Folds step outputs into per-sequence results keyed `requestId/index`. */
export function collect(
  steps: readonly EngineCoreOutputs[],
  into = new Map<string, SeqResult>(),
): Map<string, SeqResult> {
  for (const s of steps) {
    for (const o of s.outputs) {
      const k = `${o.requestId}/${o.index}`;
      let r = into.get(k);
      if (r === undefined) into.set(k, (r = { tokens: [], text: '', events: [], outputs: 0 }));
      r.tokens.push(...o.newTokenIds);
      r.text += o.text;
      r.events.push(...o.events);
      r.outputs++;
      if (o.prefill !== undefined) r.prefill = o.prefill;
      if (o.finishReason !== undefined) {
        r.finishReason = o.finishReason;
        r.stopReason = o.stopReason;
        r.numGenerationTokens = o.numGenerationTokens;
      }
    }
  }
  return into;
}

/** Steps until idle (bounded), returning every step's outputs. */
export async function drain(engine: EngineCore, maxSteps = 10000): Promise<EngineCoreOutputs[]> {
  const steps: EngineCoreOutputs[] = [];
  while (engine.hasWork() && steps.length < maxSteps) steps.push(await engine.step());
  return steps;
}

/** Sums the counters of every stats record. */
export function totals(steps: readonly EngineCoreOutputs[]): {
  queries: number;
  hits: number;
  preemptions: number;
  steps: number;
  records: number;
} {
  const t = { queries: 0, hits: 0, preemptions: 0, steps: 0, records: 0 };
  for (const s of steps) {
    const st: GenSchedulerStats | undefined = s.stats;
    if (st === undefined) continue;
    t.queries += st.prefixCacheQueries;
    t.hits += st.prefixCacheHits;
    t.preemptions += st.numPreemptions;
    t.steps += st.numSteps;
    t.records++;
  }
  return t;
}
