/**
 * Collects one request's outputs per choice (sequence index): text, finish reason, stop reason,
 * and the usage counts. Streaming and non-streaming answers read the same collector.
 */
import type { FinishReason, GenRequestOutput } from '../../schema/engine-ipc.js';

/** One choice's state. */
export interface Choice {
  text: string;
  finishReason: FinishReason | null;
  stopReason: string | number | null;
}

/** Usage in OpenAI's shape. */
export interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
  readonly total_tokens: number;
}

/** The outputs of one request, folded. */
export class ChoiceCollector {
  readonly choices: Choice[] = [];
  private promptTokens = 0;
  private completionTokens = 0;
  private finished = 0;

  constructor(readonly n: number) {
    for (let i = 0; i < n; i++) this.choices.push({ text: '', finishReason: null, stopReason: null });
  }

  /** Folds one output in; returns its choice (undefined for an index out of range). */
  add(o: GenRequestOutput): Choice | undefined {
    const c = this.choices[o.index];
    if (c === undefined) return undefined;
    if (o.prefill !== undefined) this.promptTokens = o.prefill.numPromptTokens;
    this.completionTokens += o.newTokenIds.length;
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
    return this.finished === this.n;
  }

  /** The finish reason that makes the request an error, if any choice ended with one. */
  get error(): boolean {
    return this.choices.some((c) => c.finishReason === 'error');
  }

  usage(): Usage {
    return { prompt_tokens: this.promptTokens, completion_tokens: this.completionTokens, total_tokens: this.promptTokens + this.completionTokens };
  }
}
