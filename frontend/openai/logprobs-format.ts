/**
 * The engine's token logprobs in OpenAI's two shapes. Completions (`logprobs: k`):
 * `{tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}`, each top dict the
 * k best plus the chosen token (as vLLM answers). Chat (`logprobs: true, top_logprobs: k`):
 * `{content: [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}` with the k best.
 */
import type { GenTokenLogprobs } from '../../schema/engine-ipc.js';
import type { ModelVocab } from '../generation/model-vocab.js';

/** Completions' logprobs object. */
export interface CompletionLogprobs {
  readonly tokens: string[];
  readonly token_logprobs: number[];
  readonly top_logprobs: Record<string, number>[];
  readonly text_offset: number[];
}

/** One entry of chat's `logprobs.content`. */
export interface ChatTokenLogprob {
  readonly token: string;
  readonly logprob: number;
  readonly bytes: number[];
  readonly top_logprobs: { readonly token: string; readonly logprob: number; readonly bytes: number[] }[];
}

/**
 * Completions' logprobs of `entries`, whose text starts at character `offset` of the choice's
 * text (a stream continues from the previous chunk's end). Offsets advance by each token's
 * rendered length, as vLLM's do.
 */
export function completionLogprobs(
  entries: readonly GenTokenLogprobs[],
  vocab: ModelVocab,
  offset: number,
): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let at = offset;
  for (const e of entries) {
    const token = vocab.tokenText(e.id);
    const top: Record<string, number> = {};
    for (const t of e.top) top[vocab.tokenText(t.id)] = t.logprob;
    top[token] = e.logprob;
    out.tokens.push(token);
    out.token_logprobs.push(e.logprob);
    out.top_logprobs.push(top);
    out.text_offset.push(at);
    at += token.length;
  }
  return out;
}

/** The character offset after `entries` rendered from `offset` (where a stream's next chunk starts). */
export function endOffset(entries: readonly GenTokenLogprobs[], vocab: ModelVocab, offset: number): number {
  let at = offset;
  for (const e of entries) at += vocab.tokenText(e.id).length;
  return at;
}

/** Chat's `logprobs` object of `entries`. */
export function chatLogprobs(entries: readonly GenTokenLogprobs[], vocab: ModelVocab): { content: ChatTokenLogprob[] } {
  return {
    content: entries.map((e) => ({
      token: vocab.tokenText(e.id),
      logprob: e.logprob,
      bytes: vocab.tokenBytes(e.id),
      top_logprobs: e.top.map((t) => ({
        token: vocab.tokenText(t.id),
        logprob: t.logprob,
        bytes: vocab.tokenBytes(t.id),
      })),
    })),
  };
}
