/**
 * The request fields each OpenAI route implements. Anything else is refused with a 400 naming
 * it (OpenAI's `unsupported_parameter`), never silently ignored: a field that would change the
 * output (`tools`, `response_format`, `best_of`, …) must not be dropped. `null` counts as absent.
 */

/** Sampling and output fields both routes implement. */
const COMMON = [
  'model',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'n',
  'seed',
  'stop',
  'stop_token_ids',
  'ignore_eos',
  'min_tokens',
  'include_stop_str_in_output',
  'presence_penalty',
  'frequency_penalty',
  'repetition_penalty',
  'logit_bias',
  'logprobs',
  'stream',
  'stream_options',
  // An end-user id for abuse tracking: metadata with no effect on the output (OpenAI, vLLM).
  'user',
] as const;

/** `POST /v1/completions`. */
export const COMPLETION_FIELDS: ReadonlySet<string> = new Set([...COMMON, 'prompt', 'echo']);

/** `POST /v1/chat/completions`. */
export const CHAT_FIELDS: ReadonlySet<string> = new Set([
  ...COMMON,
  'messages',
  'max_completion_tokens',
  'top_logprobs',
  // vLLM's chat template controls (frontend/generation/chat-template.ts).
  'add_generation_prompt',
  'chat_template_kwargs',
]);

/** A chat request to a model that speaks (a pipeline): audio output's two fields as well. */
export const SPOKEN_CHAT_FIELDS: ReadonlySet<string> = new Set([...CHAT_FIELDS, 'modalities', 'audio']);

/**
 * `POST /v1/audio/speech`. OpenAI's `speed`, `instructions` and `stream_format` would change the
 * audio; the tiny vocoder does none of them, so they are refused rather than dropped.
 */
export const SPEECH_FIELDS: ReadonlySet<string> = new Set(['model', 'input', 'voice', 'response_format']);

/** `POST /v1/embeddings` (OpenAI's; `user` taken and ignored, `dimensions` only where the model-config lists it). */
export const EMBEDDINGS_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'input',
  'encoding_format',
  'dimensions',
  'user',
]);

/** A spoken chat's `audio` options (OpenAI's). */
export const AUDIO_OPTION_FIELDS: ReadonlySet<string> = new Set(['voice', 'format']);

/** `stream_options`. */
export const STREAM_OPTION_FIELDS: ReadonlySet<string> = new Set(['include_usage', 'continuous_usage_stats']);

/** A chat message. */
export const MESSAGE_FIELDS: ReadonlySet<string> = new Set(['role', 'content']);

/** The fields of `obj` that are set (not null) and not in `allowed`, in body order. */
export function unsupportedFields(obj: Readonly<Record<string, unknown>>, allowed: ReadonlySet<string>): string[] {
  return Object.keys(obj).filter((k) => !allowed.has(k) && obj[k] !== undefined && obj[k] !== null);
}
