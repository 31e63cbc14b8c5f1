/**
 * A Hugging Face model's default sampling params (its generation_config.json, vLLM's
 * `--generation-config auto`) under a request's own: a field the request sets wins, one it leaves
 * out takes the model's default; `max_new_tokens` becomes the default max_tokens (still capped to
 * what is left of max_model_len).
 */
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import type { ParsedRequest } from './params.js';

/** `p` with `defaults` under its params (`p` itself when the model has none). */
export function withSamplingDefaults(p: ParsedRequest, defaults: GenSamplingParams | undefined): ParsedRequest {
  if (defaults === undefined) return p;
  const { max_tokens: maxNew, ...rest } = defaults;
  return {
    ...p,
    params: { ...rest, ...p.params },
    ...(maxNew !== undefined ? { defaultMaxTokens: maxNew } : {}),
  };
}
