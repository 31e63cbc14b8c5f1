/**
 * A choice in the shape of its route: `/v1/chat/completions` (a message) or `/v1/completions`
 * (text, the prompt leading it with `echo`), with its logprobs in that route's form.
 */
import type { GenTokenLogprobs } from '../../schema/engine-ipc.js';
import type { ModelVocab } from '../generation/model-vocab.js';
import type { Choice } from './choice-collector.js';
import { chatLogprobs, completionLogprobs } from './logprobs-format.js';
import type { ParsedRequest } from './params.js';
import type { ReadyPrompt } from './request-prompts.js';

/** Which of the two routes answers. */
export type Kind = 'completion' | 'chat';

/** What rendering a choice needs of its request. */
export interface RenderContext {
  readonly vocab: ModelVocab;
  readonly p: ParsedRequest;
  readonly prompts: readonly ReadyPrompt[];
  readonly kind: Kind;
}

/** A choice's logprobs in the route's shape, or null when the request did not ask for them. */
export function logprobsBody(ctx: RenderContext, entries: readonly GenTokenLogprobs[], offset: number): object | null {
  if (ctx.p.params.logprobs === undefined) return null;
  return ctx.kind === 'chat' ? chatLogprobs(entries, ctx.vocab) : completionLogprobs(entries, ctx.vocab, offset);
}

/** A finished choice of a plain (not streamed) answer, in the route's shape. */
export function choiceBody(ctx: RenderContext, c: Choice, index: number): object {
  const logprobs = logprobsBody(ctx, c.logprobs, 0);
  if (ctx.kind === 'chat') {
    return {
      index,
      message: { role: 'assistant', content: c.text },
      logprobs,
      finish_reason: c.finishReason,
      stop_reason: c.stopReason,
    };
  }
  const text = ctx.p.echo ? ctx.prompts[c.prompt]!.text + c.text : c.text;
  return { index, text, logprobs, finish_reason: c.finishReason, stop_reason: c.stopReason };
}
