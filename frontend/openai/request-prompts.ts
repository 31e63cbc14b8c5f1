/**
 * A parsed request's prompts made ready for the engine once the model is known: tokenized as
 * the model's engine would (frontend/generation/model-vocab.ts), ids checked against its vocabulary, and max_tokens
 * defaulted (completions: 16, chat: what is left of max_model_len, both capped to what is left)
 * or refused when prompt + max_tokens exceeds max_model_len, with vLLM's messages. A served
 * model's KV budget holds max_model_len (its model-config check refuses it otherwise), so
 * max_model_len is the only bound.
 */
import type { Response } from 'express';
import { OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import { bansEveryToken, minTokensBanMessage } from '../../schema/vocab-bans.js';
import type { ModelVocab } from '../generation/model-vocab.js';
import type { ParsedRequest } from './params.js';

/** One prompt ready for the engine. */
export interface ReadyPrompt {
  readonly ids: readonly number[];
  /** The prompt as text (echo): the string sent, or the ids decoded. */
  readonly text: string;
  /** The effective max_tokens of this prompt's request. */
  readonly maxTokens: number;
}

function checkIds(ids: readonly number[], vocabSize: number, what: string, param: string): void {
  ids.forEach((id, i) => {
    if (id >= vocabSize)
      throw new OpenAIError(
        400,
        `${what} token id ${id} at index ${i} is outside the model's vocabulary (0..${vocabSize - 1})`,
        param,
      );
  });
}

/** Tokenizes and checks every prompt of `p` for the model of `vocab`. Throws OpenAIError(400). */
export function readyPrompts(p: ParsedRequest, vocab: ModelVocab): ReadyPrompt[] {
  const V = vocab.vocabSize;
  checkIds(p.params.stop_token_ids ?? [], V, 'stop_token_ids', 'stop_token_ids');
  const biased = Object.keys(p.params.logit_bias ?? {})
    .map(Number)
    .filter((id) => id >= V);
  if (biased.length > 0) {
    throw new OpenAIError(
      400,
      `token_id(s) [${biased.join(', ')}] in logit_bias contain out-of-vocab token ids. Vocabulary size: ${V}`,
      'logit_bias',
    );
  }
  // The engine would refuse it too, but only once admitted: a stream had already answered 200.
  const minTokens = p.params.min_tokens ?? 0;
  if (minTokens > 0 && p.params.stop_token_ids !== undefined) {
    if (bansEveryToken(new Set([...vocab.suppressTokenIds, ...vocab.eosTokenIds, ...p.params.stop_token_ids]), V)) {
      throw new OpenAIError(400, minTokensBanMessage(V, minTokens), 'stop_token_ids');
    }
  }
  const L = vocab.maxModelLen;
  // A chat request's one prompt is its rendered template (a 400 when the model has none).
  const prompts = p.chat === undefined ? p.prompts : [vocab.chatTemplate.render(p.chat)];
  const addSpecial = p.chat === undefined || vocab.chatAddsSpecialTokens;
  return prompts.map((prompt) => {
    if (typeof prompt !== 'string') checkIds(prompt, V, 'prompt', 'prompt');
    // Counted before it is encoded: the ids of a 120 MB prompt (tsserve generate reads lines of
    // any length) took the heap past its limit, a V8 fatal error instead of this refusal.
    let n = typeof prompt === 'string' ? vocab.count(prompt, addSpecial) : prompt.length;
    // The prompt alone leaves no room: vLLM says so whether max_tokens was given or not.
    if (n >= L) {
      throw new OpenAIError(
        400,
        `This model's maximum context length is ${L} tokens. However, your request has ${n} input tokens. Please reduce the length of the input messages.`,
      );
    }
    const ids = typeof prompt === 'string' ? vocab.encode(prompt, addSpecial) : prompt;
    // A huge prompt is counted in pieces (frontend/generation/model-vocab.ts): the ids are what the engine gets.
    if (ids.length >= L) {
      throw new OpenAIError(
        400,
        `This model's maximum context length is ${L} tokens. However, your request has ${ids.length} input tokens. Please reduce the length of the input messages.`,
      );
    }
    n = ids.length;
    // Completions default to 16 (OpenAI, vLLM), chat to the rest of the context; both capped to it.
    const maxTokens = p.maxTokens ?? Math.min(p.defaultMaxTokens ?? L - n, L - n);
    if (n + maxTokens > L) {
      throw new OpenAIError(
        400,
        `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokens}. This model's maximum context length is ${L} tokens and your request has ${n} input tokens (${maxTokens} > ${L} - ${n}).`,
        'max_tokens',
      );
    }
    if (minTokens > maxTokens) {
      const why = maxTokens < L - n ? 'the default of /v1/completions' : `what is left of max_model_len ${L}`;
      throw new OpenAIError(
        400,
        `min_tokens (${minTokens}) must be <= max_tokens (${maxTokens}, ${why})`,
        'min_tokens',
      );
    }
    return { ids, text: typeof prompt === 'string' ? prompt : vocab.decode(ids), maxTokens };
  });
}

/** readyPrompts, or undefined once its refusal (an OpenAIError) is answered on `res`. */
export function readyOrRefused(p: ParsedRequest, vocab: ModelVocab, res: Response): ReadyPrompt[] | undefined {
  try {
    return readyPrompts(p, vocab);
  } catch (e) {
    if (!(e instanceof OpenAIError)) throw e;
    sendOpenAIError(res, e);
    return undefined;
  }
}
