/**
 * Request bodies of `/v1/completions` and `/v1/chat/completions`, validated into the engine's
 * sampling params. Every problem is a 400 in OpenAI's error shape naming the parameter; a field
 * we do not implement is refused by name (allowed-fields.ts), never ignored; `null` counts as
 * absent (some clients send it). What needs the model (its vocabulary, max_model_len) is checked
 * by request-prompts.ts once the model is known.
 */
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import { MAX_SEED } from '../../schema/sampling-params-check.js';
import {
  CHAT_FIELDS,
  COMPLETION_FIELDS,
  MESSAGE_FIELDS,
  STREAM_OPTION_FIELDS,
  unsupportedFields,
} from './allowed-fields.js';
import type { ChatMessage, ChatRequestPart } from '../generation/chat-template.js';
import { OpenAIError } from '../http/openai-errors.js';
import { capMessage, echoList } from '../../schema/echo.js';
import { excerpt } from '../../schema/files/model-file.js';

/** Largest n we accept. */
export const MAX_N = 16;
/** Most prompts in one completions request. */
export const MAX_PROMPTS = 64;
/** `/v1/completions`' max_tokens when the client gives none (OpenAI's and vLLM's), capped to what is left of max_model_len. */
export const COMPLETION_DEFAULT_MAX_TOKENS = 16;
/** Most logprobs alternatives per token (vLLM's default max_logprobs). */
export const MAX_LOGPROBS = 20;
/**
 * Most stop strings: each is searched for after every token of every sequence, so an unbounded
 * list (80,000 in a 600 KB body) slowed every request of the engine several times over.
 * OpenAI takes 4; vLLM has no bound.
 */
export const MAX_STOP = 64;

/** A validated request. */
export interface ParsedRequest {
  readonly model: string;
  /** One entry per prompt: text, or token ids (sent as they are; `/v1/completions` only). Chat has none: see `chat`. */
  readonly prompts: readonly (string | readonly number[])[];
  /** A chat request's messages and template options: its one prompt is rendered once the model (its template) is known. */
  readonly chat?: ChatRequestPart;
  /** The engine's params, without max_tokens (defaulted per prompt once the prompt is tokenized). */
  readonly params: GenSamplingParams & { readonly n: number };
  /** The client's max_tokens; undefined = `defaultMaxTokens`, capped to what is left of max_model_len. */
  readonly maxTokens: number | undefined;
  /** max_tokens when the client gives none (completions: 16); undefined = what is left of max_model_len (chat). */
  readonly defaultMaxTokens?: number;
  readonly stream: boolean;
  readonly includeUsage: boolean;
  /** `stream_options.continuous_usage_stats`: usage on every chunk. */
  readonly continuousUsage: boolean;
  /** Completions' `echo`: the prompt text is sent before the output. */
  readonly echo: boolean;
}

type Obj = Readonly<Record<string, unknown>>;

const present = (v: unknown): boolean => v !== undefined && v !== null;

/** A value as a message shows it: JSON, but a number as itself (JSON writes 1e309, which parses to Infinity, as null). */
const shown = (v: unknown): string =>
  typeof v === 'number' ? String(v) : typeof v === 'string' ? excerpt(v) : capMessage(String(JSON.stringify(v)));

function bad(param: string, message: string): never {
  throw new OpenAIError(400, message, param);
}

function int(body: Obj, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    bad(key, `${key} must be an integer between ${min} and ${max}, got ${shown(v)}`);
  }
  return v;
}

function num(body: Obj, key: string, ok: (v: number) => boolean, what: string): number | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) bad(key, `${key} must be ${what}, got ${shown(v)}`);
  return v;
}

/** `prefix` names a nested field by its path (`stream_options.`), in the message and in `param`. */
function bool(body: Obj, key: string, prefix = ''): boolean | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (typeof v !== 'boolean') bad(`${prefix}${key}`, `${prefix}${key} must be true or false, got ${shown(v)}`);
  return v;
}

/**
 * `seed`, 0..MAX_SEED. OpenAI and vLLM take any 64-bit integer, but a JSON number past 2^53 - 1
 * reaches us rounded (2^64 - 1 and 2^64 - 2 both parse to 2^64), so it is refused rather than
 * silently merged with its neighbours; a negative one too (vLLM takes it as a seed, llama.cpp's
 * -1 means "random": refusing beats guessing).
 */
function seedOf(body: Obj): number | undefined {
  const v = body.seed;
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_SEED) {
    bad(
      'seed',
      `seed must be an integer between 0 and ${MAX_SEED} (2^53 - 1, the largest a JSON number carries exactly), got ${shown(v)}`,
    );
  }
  return v;
}

/** Refuses (400, by name) every set field of `body` not in `allowed`. */
export function refuseUnsupported(body: Obj, allowed: ReadonlySet<string>, prefix = ''): void {
  const extra = unsupportedFields(body, allowed);
  if (extra.length === 0) return;
  const names = echoList(extra.map((k) => (k.length <= 80 ? `'${prefix}${k}'` : `${prefix}${excerpt(k)}`)));
  throw new OpenAIError(
    400,
    `Unsupported parameter${extra.length > 1 ? 's' : ''}: ${names} ${extra.length > 1 ? 'are' : 'is'} not supported by this server.`,
    `${prefix}${extra[0]!}`,
    'unsupported_parameter',
  );
}

function idList(body: Obj, key: string): number[] | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (!Array.isArray(v) || !v.every((x) => Number.isInteger(x) && (x as number) >= 0))
    bad(key, `${key} must be a list of token ids (integers >= 0)`);
  return v as number[];
}

/** OpenAI's `logit_bias`: token id (a string key) → bias; clamped to [-100, 100] as vLLM does. */
function logitBias(body: Obj): Record<string, number> | undefined {
  const v = body.logit_bias;
  if (!present(v)) return undefined;
  if (typeof v !== 'object' || Array.isArray(v))
    bad('logit_bias', 'logit_bias must be an object mapping token ids to biases');
  const out: Record<string, number> = {};
  for (const [k, b] of Object.entries(v as Obj)) {
    if (!/^(0|[1-9][0-9]*)$/.test(k)) bad('logit_bias', `logit_bias keys must be token ids, got ${JSON.stringify(k)}`);
    if (typeof b !== 'number' || !Number.isFinite(b))
      bad('logit_bias', `logit_bias values must be numbers, got ${shown(b)} for ${k}`);
    out[k] = Math.min(100, Math.max(-100, b));
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function stopList(body: Obj): string[] | undefined {
  const v = body.stop;
  if (!present(v)) return undefined;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && s.length > 0)) {
    bad('stop', 'stop must be a non-empty string or a list of non-empty strings');
  }
  if (list.length > MAX_STOP) bad('stop', `stop takes at most ${MAX_STOP} strings, got ${list.length}`);
  return list.length === 0 ? undefined : list;
}

function common(
  body: Obj,
  prompts: readonly (string | readonly number[])[],
  maxTokensKeys: readonly string[],
  logprobs: number | undefined,
): ParsedRequest {
  const model = body.model;
  if (typeof model !== 'string' || model === '')
    bad('model', 'model is required: the name of a served generation model (GET /v1/models)');
  let maxTokens: number | undefined;
  let maxTokensKey = 'max_tokens';
  for (const k of maxTokensKeys) {
    const v = int(body, k, 1); // every spelling is checked, the first one set is used
    if (maxTokens === undefined && v !== undefined) [maxTokens, maxTokensKey] = [v, k];
  }
  const n = int(body, 'n', 1, MAX_N) ?? 1;
  const temperature = num(body, 'temperature', (x) => x >= 0 && x <= 2, 'a number between 0 and 2');
  const topP = num(body, 'top_p', (x) => x > 0 && x <= 1, 'a number in (0, 1]');
  const topK = int(body, 'top_k', -1);
  const minP = num(body, 'min_p', (x) => x >= 0 && x <= 1, 'a number between 0 and 1');
  const presence = num(body, 'presence_penalty', (x) => x >= -2 && x <= 2, 'a number between -2 and 2');
  const frequency = num(body, 'frequency_penalty', (x) => x >= -2 && x <= 2, 'a number between -2 and 2');
  const repetition = num(body, 'repetition_penalty', (x) => x > 0 && x <= 2 ** 31, 'a number > 0');
  const bias = logitBias(body);
  const seed = seedOf(body);
  const stop = stopList(body);
  const stopTokenIds = idList(body, 'stop_token_ids');
  const minTokens = int(body, 'min_tokens', 0);
  if (minTokens !== undefined && maxTokens !== undefined && minTokens > maxTokens)
    bad('min_tokens', `min_tokens (${minTokens}) must be <= ${maxTokensKey} (${maxTokens})`);
  // Metadata with no effect, but OpenAI and vLLM take a string only: another type is the client's mistake.
  if (present(body.user) && typeof body.user !== 'string')
    bad('user', `user must be a string, got ${shown(body.user)}`);
  const ignoreEos = bool(body, 'ignore_eos');
  const includeStop = bool(body, 'include_stop_str_in_output');
  const stream = bool(body, 'stream') ?? false;
  const so = body.stream_options;
  let includeUsage = false;
  let continuousUsage = false;
  if (present(so)) {
    if (typeof so !== 'object' || Array.isArray(so)) bad('stream_options', 'stream_options must be an object');
    if (!stream) bad('stream_options', 'stream_options is only allowed when stream is true');
    refuseUnsupported(so as Obj, STREAM_OPTION_FIELDS, 'stream_options.');
    includeUsage = bool(so as Obj, 'include_usage', 'stream_options.') ?? false;
    continuousUsage = bool(so as Obj, 'continuous_usage_stats', 'stream_options.') ?? false;
  }
  const params: GenSamplingParams & { n: number } = {
    n,
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { top_p: topP } : {}),
    ...(topK !== undefined ? { top_k: topK } : {}),
    ...(minP !== undefined ? { min_p: minP } : {}),
    ...(presence !== undefined ? { presence_penalty: presence } : {}),
    ...(frequency !== undefined ? { frequency_penalty: frequency } : {}),
    ...(repetition !== undefined ? { repetition_penalty: repetition } : {}),
    ...(bias !== undefined ? { logit_bias: bias } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(stop !== undefined ? { stop } : {}),
    ...(stopTokenIds !== undefined ? { stop_token_ids: stopTokenIds } : {}),
    ...(minTokens !== undefined ? { min_tokens: minTokens } : {}),
    ...(ignoreEos !== undefined ? { ignore_eos: ignoreEos } : {}),
    ...(includeStop !== undefined ? { include_stop_str_in_output: includeStop } : {}),
    ...(logprobs !== undefined ? { logprobs } : {}),
  };
  return { model, prompts, params, maxTokens, stream, includeUsage, continuousUsage, echo: false };
}

/** The body as an object, else 400. */
export function asObject(body: unknown): Obj {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OpenAIError(400, 'the request body must be a JSON object');
  }
  return body as Obj;
}

/** True for a non-empty list whose every entry is a number (a token-id prompt, maybe invalid). */
function isIdList(v: unknown): v is readonly unknown[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number');
}

/** One prompt: a non-empty string or a non-empty list of integer ids >= 0. */
function onePrompt(prompt: unknown, at: string): string | readonly number[] {
  if (typeof prompt === 'string') {
    if (prompt === '') bad('prompt', `${at} must not be empty`);
    return prompt;
  }
  if (Array.isArray(prompt) && prompt.length === 0) bad('prompt', `${at} must not be empty`);
  if (!isIdList(prompt)) bad('prompt', 'prompt must be a string, a list of token ids, or a list of either');
  prompt.forEach((id, i) => {
    if (!Number.isInteger(id) || (id as number) < 0)
      bad('prompt', `prompt token ids must be integers >= 0, got ${shown(id)} at index ${i}`);
  });
  return prompt as readonly number[];
}

/**
 * `prompt` as OpenAI allows it: a string, a list of token ids, or a list of either (one engine
 * request per prompt, at most MAX_PROMPTS). The vocabulary bound needs the model (request-prompts.ts).
 */
function parsePrompts(raw: unknown): (string | readonly number[])[] {
  if (typeof raw === 'string' || isIdList(raw)) return [onePrompt(raw, 'prompt')];
  if (!Array.isArray(raw) || raw.length === 0)
    bad('prompt', 'prompt must be a string, a list of token ids, or a non-empty list of either');
  if (raw.length > MAX_PROMPTS) bad('prompt', `at most ${MAX_PROMPTS} prompts per request, got ${raw.length}`);
  return raw.map((p, i) => onePrompt(p, `prompt[${i}]`));
}

/** Completions' `logprobs`: how many alternatives per token (0..MAX_LOGPROBS). */
function completionLogprobs(body: Obj): number | undefined {
  return int(body, 'logprobs', 0, MAX_LOGPROBS);
}

/** Validates a `/v1/completions` body. Throws OpenAIError(400). */
export function parseCompletionRequest(raw: unknown): ParsedRequest {
  const body = asObject(raw);
  refuseUnsupported(body, COMPLETION_FIELDS);
  const echo = bool(body, 'echo') ?? false;
  const logprobs = completionLogprobs(body);
  // Echoed prompt logprobs need the model's logits at every prompt position, which the runners do not return.
  if (echo && logprobs !== undefined)
    bad('echo', 'echo with logprobs is not supported: tsserve does not compute prompt logprobs');
  return {
    ...common(body, parsePrompts(body.prompt), ['max_tokens'], logprobs),
    echo,
    defaultMaxTokens: COMPLETION_DEFAULT_MAX_TOKENS,
  };
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function messageContent(c: unknown, i: number): string {
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    const parts: string[] = [];
    for (const p of c) {
      const part = p as Obj;
      if (typeof p !== 'object' || p === null || part.type !== 'text' || typeof part.text !== 'string') {
        bad(`messages[${i}].content`, 'only text content parts ({"type": "text", "text": ...}) are supported');
      }
      parts.push(part.text as string);
    }
    // vLLM joins a message's text parts with a newline: the same parts make the same prompt.
    return parts.join('\n');
  }
  return bad(`messages[${i}].content`, 'content must be a string or a list of text parts');
}

/** Validates chat `messages` (a non-empty list of {role, content}). Throws OpenAIError(400). */
export function parseMessages(msgs: unknown): ChatMessage[] {
  if (!Array.isArray(msgs) || msgs.length === 0)
    bad('messages', 'messages must be a non-empty list of {role, content}');
  return msgs.map((m: unknown, i) => {
    const o = m as Obj;
    if (typeof m !== 'object' || m === null || Array.isArray(m))
      bad(`messages[${i}]`, 'each message must be an object {role, content}');
    refuseUnsupported(o, MESSAGE_FIELDS, `messages[${i}].`);
    if (typeof o.role !== 'string' || !ROLES.has(o.role))
      bad(`messages[${i}].role`, `role must be one of ${[...ROLES].join(', ')}`);
    return { role: o.role as string, content: messageContent(o.content, i) };
  });
}

/** Most keys of `chat_template_kwargs` (each becomes a template variable). */
const MAX_TEMPLATE_KWARGS = 64;

/** Validates `chat_template_kwargs`: an object of JSON values, bounded; `{}` when absent. */
export function templateKwargs(v: unknown): Readonly<Record<string, unknown>> {
  if (!present(v)) return {};
  if (typeof v !== 'object' || Array.isArray(v))
    bad('chat_template_kwargs', 'chat_template_kwargs must be an object of template variables');
  const keys = Object.keys(v as object);
  if (keys.length > MAX_TEMPLATE_KWARGS)
    bad('chat_template_kwargs', `chat_template_kwargs has ${keys.length} keys; at most ${MAX_TEMPLATE_KWARGS}`);
  return v as Readonly<Record<string, unknown>>;
}

/** The template part of a chat body: its messages, `add_generation_prompt` (default true) and `chat_template_kwargs`. */
export function chatPart(body: Obj): ChatRequestPart {
  return {
    messages: parseMessages(body.messages),
    addGenerationPrompt: bool(body, 'add_generation_prompt') ?? true,
    kwargs: templateKwargs(body.chat_template_kwargs),
  };
}

/** Validates a `/v1/chat/completions` body (the template is rendered with the model's, request-prompts.ts). Throws OpenAIError(400). */
export function parseChatRequest(
  raw: unknown,
  allowed: ReadonlySet<string> = CHAT_FIELDS,
): ParsedRequest & { readonly messages: readonly ChatMessage[]; readonly chat: ChatRequestPart } {
  const body = asObject(raw);
  refuseUnsupported(body, allowed);
  const wantLogprobs = bool(body, 'logprobs') ?? false;
  const top = int(body, 'top_logprobs', 0, MAX_LOGPROBS);
  if (top !== undefined && !wantLogprobs) bad('top_logprobs', 'top_logprobs needs logprobs set to true');
  const chat = chatPart(body);
  return {
    ...common(body, [], ['max_completion_tokens', 'max_tokens'], wantLogprobs ? (top ?? 0) : undefined),
    chat,
    messages: chat.messages,
  };
}
