/**
 * Offline generation (vLLM's `LLM` class): load a model directory, hand it a list of prompts,
 * get the completions back. It drives the same EngineCore the server's workers run, in-process.
 */
import type { FinishReason, GenSamplingParams, GenTokenLogprobs, PrefillStats } from '../../schema/engine-ipc.js';
import type { EngineCore } from './engine-core.js';
import { loadEngine, readModelDir } from './load.js';

/** One generated sequence. */
export interface CompletionSequence {
  readonly index: number;
  readonly text: string;
  readonly tokenIds: readonly number[];
  readonly finishReason: FinishReason;
  readonly stopReason?: string | number;
  /** One per token, only when params asked for `logprobs`. */
  readonly logprobs?: readonly GenTokenLogprobs[];
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
  readonly seqs: {
    text: string;
    tokenIds: number[];
    finishReason?: FinishReason;
    stopReason?: string | number;
    logprobs?: GenTokenLogprobs[];
  }[];
  /** Sequences not yet finished. */
  open: number;
  /** Set when the engine itself threw (not a model-run failure, which finishes with `error`). */
  error?: Error;
}

/** A prompt the engine refused at add (`index` in the call's list); the message is `prompt <index>: <reason>`. */
export class PromptRejected extends Error {
  constructor(
    readonly index: number,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`prompt ${index}: ${reason}`, options);
  }
}

/** An in-process engine with a batch API; `generate` may be called concurrently. */
export class LLM {
  private counter = 0;
  /** Requests of every unfinished `generate` call, by request id. */
  private readonly pending = new Map<string, Pending>();
  /** The one loop driving the engine (null when idle); every `generate` call awaits its requests. */
  private driver: Promise<void> | null = null;
  private readonly waiters = new Set<() => void>();

  constructor(readonly engine: EngineCore) {}

  /** Loads a model already configured (a Hugging Face directory's settings, read by the caller). */
  static async fromConfig(
    m: {
      readonly dir: string;
      readonly modelFile: string;
      readonly engine: Readonly<Record<string, unknown>>;
      readonly threads?: number;
    },
    overrides: Readonly<Record<string, unknown>> = {},
  ): Promise<LLM> {
    return new LLM(
      await loadEngine({
        dir: m.dir,
        modelFile: m.modelFile,
        engine: m.engine,
        overrides,
        ...(m.threads !== undefined ? { threads: m.threads } : {}),
      }),
    );
  }

  /** Loads `modelDir` (its model-config.yaml `engine:` block, then `overrides`). */
  static async load(modelDir: string, overrides: Readonly<Record<string, unknown>> = {}): Promise<LLM> {
    const m = await readModelDir(modelDir);
    return new LLM(
      await loadEngine({
        dir: modelDir,
        modelFile: m.modelFile,
        engine: m.engine,
        overrides,
        ...(m.threads !== undefined ? { threads: m.threads } : {}),
      }),
    );
  }

  /**
   * Generates for every prompt (text, or token ids) with one params object or one per prompt;
   * all prompts go into the engine at once and are continuously batched with those of any other
   * call in flight. Results keep the order. A sequence whose model run failed finishes with
   * `error`; the others go on.
   */
  async generate(
    prompts: string | readonly (string | readonly number[])[],
    params: GenSamplingParams | readonly GenSamplingParams[] = {},
  ): Promise<CompletionOutput[]> {
    const list = typeof prompts === 'string' ? [prompts] : prompts;
    const ids: string[] = [];
    list.forEach((prompt, i) => {
      const p = Array.isArray(params)
        ? ((params as readonly GenSamplingParams[])[i] ?? {})
        : (params as GenSamplingParams);
      const id = `llm-${this.counter++}`;
      try {
        this.engine.addRequest(id, prompt, p);
      } catch (e) {
        for (const added of ids) {
          this.engine.abort(added);
          this.pending.delete(added);
        }
        throw new PromptRejected(i, (e as Error).message, { cause: e });
      }
      const promptTokenIds = typeof prompt === 'string' ? this.engine.tokenizer.encode(prompt) : [...prompt];
      this.pending.set(id, {
        prompt,
        promptTokenIds,
        seqs: Array.from({ length: p.n ?? 1 }, () => ({ text: '', tokenIds: [] })),
        open: p.n ?? 1,
      });
      ids.push(id);
    });
    const mine = ids.map((id) => this.pending.get(id)!);
    while (mine.some((p) => p.open > 0)) await this.nextStep();
    for (const id of ids) this.pending.delete(id);
    const failed = mine.find((p) => p.error !== undefined);
    if (failed !== undefined) throw failed.error!;
    return ids.map((id, i) => {
      const p = mine[i]!;
      return {
        requestId: id,
        prompt: p.prompt,
        promptTokenIds: p.promptTokenIds,
        numCachedTokens: p.prefill?.numCachedTokens ?? 0,
        outputs: p.seqs.map((s, index) => ({
          index,
          text: s.text,
          tokenIds: s.tokenIds,
          finishReason: s.finishReason ?? 'error',
          ...(s.stopReason !== undefined ? { stopReason: s.stopReason } : {}),
          ...(s.logprobs !== undefined ? { logprobs: s.logprobs } : {}),
        })),
      };
    });
  }

  /** Resolves after the driver's next step (starting the driver when idle). */
  private nextStep(): Promise<void> {
    const p = new Promise<void>((resolve) => this.waiters.add(resolve));
    if (this.driver === null) this.driver = this.drive();
    return p;
  }

  private async drive(): Promise<void> {
    try {
      while (this.engine.hasWork()) {
        const step = await this.engine.step();
        for (const o of step.outputs) {
          const p = this.pending.get(o.requestId);
          if (p === undefined) continue;
          const s = p.seqs[o.index]!;
          s.text += o.text;
          s.tokenIds.push(...o.newTokenIds);
          if (o.logprobs !== undefined) (s.logprobs ??= []).push(...o.logprobs);
          if (o.prefill !== undefined && p.prefill === undefined) p.prefill = o.prefill;
          if (o.finishReason !== undefined && s.finishReason === undefined) {
            s.finishReason = o.finishReason;
            if (o.stopReason !== undefined) s.stopReason = o.stopReason;
            p.open--;
          }
        }
        // Failed runs are reported per sequence (finish reason `error`); the message is dropped here.
        this.engine.takeError();
        this.wake();
      }
    } catch (err) {
      for (const p of this.pending.values()) {
        p.error = err instanceof Error ? err : new Error(String(err));
        p.open = 0;
      }
    } finally {
      this.driver = null;
      // Idle (or a step threw): every waiter re-checks; any still open finishes as `error`.
      if (!this.engine.hasWork()) for (const p of this.pending.values()) p.open = 0;
      this.wake();
    }
  }

  private wake(): void {
    const w = [...this.waiters];
    this.waiters.clear();
    for (const f of w) f();
  }

  /** Releases the model. */
  close(): Promise<void> {
    return this.engine.runner.close();
  }
}
