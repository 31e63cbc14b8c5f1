/**
 * Collects one request's outputs per choice: text, finish reason, stop reason, token ids and
 * logprobs, and the usage counts. A completions request with several prompts is one engine
 * request per prompt; its choices are indexed prompt × n + sequence index. Streaming and
 * non-streaming answers read the same collector.
 */
import type { FinishReason, GenRequestOutput, GenTokenLogprobs } from '../../schema/engine-ipc.js';

/** One choice's state. */
export interface Choice {
  text: string;
  finishReason: FinishReason | null;
  stopReason: string | number | null;
  /** Generated token ids so far. */
  readonly tokenIds: number[];
  /** Logprobs of those tokens (only when asked for, and not for a stream; emptied once the choice is rendered). */
  readonly logprobs: GenTokenLogprobs[];
  /** Which prompt of the request it answers. */
  readonly prompt: number;
}

/** Usage in OpenAI's shape, with vLLM's prompt_tokens_details. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
  readonly prompt_tokens_details: { readonly cached_tokens: number };
}

/** The outputs of one request, folded. */
export class ChoiceCollector {
  readonly choices: Choice[] = [];
  /** Per prompt: prefix-cache hits of its first sequence's prefill (undefined until known). */
  private readonly cached: (number | undefined)[];
  private completionTokens = 0;
  private finished = 0;

  /**
   * @param promptTokens the token count of each prompt (known before the engine runs)
   * @param n choices per prompt
   * @param keepLogprobs fold each output's logprobs into its choice (a stream sends them as they come: false)
   */
  constructor(
    private readonly promptTokens: readonly number[],
    readonly n: number,
    private readonly keepLogprobs = true,
  ) {
    this.cached = promptTokens.map(() => undefined);
    for (let p = 0; p < promptTokens.length; p++) {
      for (let i = 0; i < n; i++)
        this.choices.push({ text: '', finishReason: null, stopReason: null, tokenIds: [], logprobs: [], prompt: p });
    }
  }

  /** Choices in all (prompts × n). */
  get size(): number {
    return this.choices.length;
  }

  /** Folds one output of prompt `prompt`'s request in; returns its choice (undefined for an index out of range). */
  add(o: GenRequestOutput, prompt = 0): Choice | undefined {
    if (o.index < 0 || o.index >= this.n) return undefined;
    const c = this.choices[prompt * this.n + o.index];
    if (c === undefined) return undefined;
    if (o.prefill !== undefined && this.cached[prompt] === undefined) this.cached[prompt] = o.prefill.numCachedTokens;
    this.completionTokens += o.newTokenIds.length;
    c.tokenIds.push(...o.newTokenIds);
    if (o.logprobs !== undefined && this.keepLogprobs) c.logprobs.push(...o.logprobs);
    c.text += o.text;
    if (o.finishReason !== undefined && c.finishReason === null) {
      c.finishReason = o.finishReason;
      c.stopReason = o.stopReason ?? null;
      this.finished++;
    }
    return c;
  }

  /** True once every choice has finished. */
  get done(): boolean {
    return this.finished === this.choices.length;
  }

  /** The finish reason that makes the request an error, if any choice ended with one. */
  get error(): boolean {
    return this.choices.some((c) => c.finishReason === 'error');
  }

  /** The whole request's usage; cached_tokens sums each prompt's prefix-cache hits. */
  usage(): Usage {
    let prompt = 0;
    for (const t of this.promptTokens) prompt += t;
    let cached = 0;
    for (const c of this.cached) cached += c ?? 0;
    return {
      prompt_tokens: prompt,
      completion_tokens: this.completionTokens,
      total_tokens: prompt + this.completionTokens,
      prompt_tokens_details: { cached_tokens: cached },
    };
  }

  /** One choice's usage so far (vLLM's continuous_usage_stats: its prompt, its tokens, or `done` of them). */
  choiceUsage(c: Choice, done = c.tokenIds.length): Usage {
    const prompt = this.promptTokens[c.prompt] ?? 0;
    return {
      prompt_tokens: prompt,
      completion_tokens: done,
      total_tokens: prompt + done,
      prompt_tokens_details: { cached_tokens: this.cached[c.prompt] ?? 0 },
    };
  }
}
