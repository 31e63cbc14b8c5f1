/**
 * Offline generation (vLLM's `LLM` class): load a model directory, hand it a list of prompts,
 * get the completions back. It drives the same EngineCore the server's workers run, in-process.
 */
import type { FinishReason, GenSamplingParams, PrefillStats } from '../../schema/engine-ipc.js';
import type { EngineCore } from './engine-core.js';
import { loadEngine, readModelDir } from './load.js';

/** One generated sequence. */
export interface CompletionSequence {
  readonly index: number;
  readonly text: string;
  readonly tokenIds: readonly number[];
  readonly finishReason: FinishReason;
  readonly stopReason?: string | number;
}

/** The result for one prompt (n sequences). */
export interface CompletionOutput {
  readonly requestId: string;
  readonly prompt: string | readonly number[];
  readonly promptTokenIds: readonly number[];
  /** From the first sequence's prefill stats (prefix-cache hits). */
  readonly numCachedTokens: number;
  readonly outputs: readonly CompletionSequence[];
}

interface Pending {
  readonly prompt: string | readonly number[];
  readonly promptTokenIds: readonly number[];
  prefill?: PrefillStats;
  readonly seqs: { text: string; tokenIds: number[]; finishReason?: FinishReason; stopReason?: string | number }[];
}

/** An in-process engine with a batch API. */
export class LLM {
  private counter = 0;

  constructor(readonly engine: EngineCore) {}

  /** Loads `modelDir` (its model-config.yaml `engine:` block, then `overrides`). */
  static async load(modelDir: string, overrides: Readonly<Record<string, unknown>> = {}): Promise<LLM> {
    const m = readModelDir(modelDir);
    return new LLM(await loadEngine({ dir: modelDir, modelFile: m.modelFile, engine: m.engine, overrides, ...(m.threads !== undefined ? { threads: m.threads } : {}) }));
  }

  /**
   * Generates for every prompt (text, or token ids) with one params object or one per prompt;
   * all prompts go into the engine at once and are continuously batched. Results keep the order.
   */
  async generate(
    prompts: string | readonly (string | readonly number[])[],
    params: GenSamplingParams | readonly GenSamplingParams[] = {},
  ): Promise<CompletionOutput[]> {
    const list = typeof prompts === 'string' ? [prompts] : prompts;
    const ids: string[] = [];
    const pending = new Map<string, Pending>();
    list.forEach((prompt, i) => {
      const p = Array.isArray(params) ? (params as readonly GenSamplingParams[])[i] ?? {} : (params as GenSamplingParams);
      const id = `llm-${this.counter++}`;
      try {
        this.engine.addRequest(id, prompt, p);
      } catch (e) {
        for (const added of ids) this.engine.abort(added);
        throw new Error(`prompt ${i}: ${(e as Error).message}`, { cause: e });
      }
      const promptTokenIds = typeof prompt === 'string' ? this.engine.tokenizer.encode(prompt) : [...prompt];
      pending.set(id, { prompt, promptTokenIds, seqs: Array.from({ length: p.n ?? 1 }, () => ({ text: '', tokenIds: [] })) });
      ids.push(id);
    });
    while (this.engine.hasWork()) {
      const step = await this.engine.step();
      for (const o of step.outputs) {
        const p = pending.get(o.requestId);
        if (p === undefined) continue;
        const s = p.seqs[o.index]!;
        s.text += o.text;
        s.tokenIds.push(...o.newTokenIds);
        if (o.prefill !== undefined && p.prefill === undefined) p.prefill = o.prefill;
        if (o.finishReason !== undefined) {
          s.finishReason = o.finishReason;
          if (o.stopReason !== undefined) s.stopReason = o.stopReason;
        }
      }
      const err = this.engine.takeError();
      if (err !== undefined) throw new Error(err);
    }
    return ids.map((id) => {
      const p = pending.get(id)!;
      return {
        requestId: id,
        prompt: p.prompt,
        promptTokenIds: p.promptTokenIds,
        numCachedTokens: p.prefill?.numCachedTokens ?? 0,
        outputs: p.seqs.map((s, index) => ({ index, text: s.text, tokenIds: s.tokenIds, finishReason: s.finishReason ?? 'error', ...(s.stopReason !== undefined ? { stopReason: s.stopReason } : {}) })),
      };
    });
  }

  /** Releases the model. */
  close(): Promise<void> {
    return this.engine.runner.close();
  }
}
