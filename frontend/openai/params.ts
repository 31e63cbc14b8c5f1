/**
 * Request bodies of `/v1/completions` and `/v1/chat/completions`, validated into the engine's
 * sampling params. Every problem is a 400 in OpenAI's error shape naming the parameter. Fields
 * OpenAI defines that we do not support (logprobs, echo, tools, …) are ignored, as vLLM
 * ignores what it does not use; `null` counts as absent (some clients send it).
 */
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import type { ChatMessage } from './chat-template.js';
import { applyChatTemplate } from './chat-template.js';
import { OpenAIError } from './errors.js';

/** Default max_tokens when the client gives none (OpenAI's completions default). */
export const DEFAULT_MAX_TOKENS = 16;
/** Largest n we accept. */
export const MAX_N = 16;

/** A validated request. */
export interface ParsedRequest {
  readonly model: string;
  /** Text (the worker tokenizes it) or token ids (sent as they are; `/v1/completions` only). */
  readonly prompt: string | readonly number[];
  readonly params: GenSamplingParams & { readonly max_tokens: number; readonly n: number };
  readonly stream: boolean;
  readonly includeUsage: boolean;
}

type Obj = Readonly<Record<string, unknown>>;

const present = (v: unknown): boolean => v !== undefined && v !== null;

function bad(param: string, message: string): never {
  throw new OpenAIError(400, message, param);
}

function int(body: Obj, key: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    bad(key, `${key} must be an integer between ${min} and ${max}, got ${JSON.stringify(v)}`);
  }
  return v;
}

function num(body: Obj, key: string, ok: (v: number) => boolean, what: string): number | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || !ok(v)) bad(key, `${key} must be ${what}, got ${JSON.stringify(v)}`);
  return v;
}

function bool(body: Obj, key: string): boolean | undefined {
  const v = body[key];
  if (!present(v)) return undefined;
  if (typeof v !== 'boolean') bad(key, `${key} must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function stopList(body: Obj): string[] | undefined {
  const v = body.stop;
  if (!present(v)) return undefined;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && s.length > 0)) {
    bad('stop', 'stop must be a non-empty string or a list of non-empty strings');
  }
  return list.length === 0 ? undefined : list;
}

function common(body: Obj, prompt: string | readonly number[], maxTokensKeys: readonly string[]): ParsedRequest {
  const model = body.model;
  if (typeof model !== 'string' || model === '') bad('model', 'model is required: the name of a served generation model (GET /v1/models)');
  let maxTokens: number | undefined;
  for (const k of maxTokensKeys) maxTokens ??= int(body, k, 1);
  const n = int(body, 'n', 1, MAX_N) ?? 1;
  const temperature = num(body, 'temperature', (x) => x >= 0 && x <= 2, 'a number between 0 and 2');
  const topP = num(body, 'top_p', (x) => x > 0 && x <= 1, 'a number in (0, 1]');
  const topK = int(body, 'top_k', -1);
  const seed = int(body, 'seed', 0);
  const stop = stopList(body);
  const ignoreEos = bool(body, 'ignore_eos');
  const stream = bool(body, 'stream') ?? false;
  const so = body.stream_options;
  let includeUsage = false;
  if (present(so)) {
    if (typeof so !== 'object' || Array.isArray(so)) bad('stream_options', 'stream_options must be an object');
    if (!stream) bad('stream_options', 'stream_options is only allowed when stream is true');
    includeUsage = bool(so as Obj, 'include_usage') ?? false;
  }
  const params: GenSamplingParams & { max_tokens: number; n: number } = {
    max_tokens: maxTokens ?? DEFAULT_MAX_TOKENS,
    n,
    ...(temperature !== undefined ? { temperature } : {}),
    ...(topP !== undefined ? { top_p: topP } : {}),
    ...(topK !== undefined ? { top_k: topK } : {}),
    ...(seed !== undefined ? { seed } : {}),
    ...(stop !== undefined ? { stop } : {}),
    ...(ignoreEos !== undefined ? { ignore_eos: ignoreEos } : {}),
  };
  return { model, prompt, params, stream, includeUsage };
}

function asObject(body: unknown): Obj {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new OpenAIError(400, 'the request body must be a JSON object');
  }
  return body as Obj;
}

/** True for a non-empty list whose every entry is a number (a token-id prompt, maybe invalid). */
function isIdList(v: unknown): v is readonly unknown[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'number');
}

/**
 * `prompt` as OpenAI allows it for one prompt: a string, a list of token ids, or a one-element
 * list of either. Ids must be integers >= 0 here; the vocabulary bound needs the model
 * (`checkPromptVocab`).
 */
function parsePrompt(raw: unknown): string | readonly number[] {
  let prompt = raw;
  if (Array.isArray(prompt) && prompt.length === 1 && (typeof prompt[0] === 'string' || Array.isArray(prompt[0]))) prompt = prompt[0];
  if (typeof prompt === 'string') {
    if (prompt === '') bad('prompt', 'prompt must not be empty');
    return prompt;
  }
  if (Array.isArray(prompt) && prompt.length === 0) bad('prompt', 'prompt must not be empty');
  if (!isIdList(prompt)) bad('prompt', 'prompt must be a string or a list of token ids (one prompt per request)');
  prompt.forEach((id, i) => {
    if (!Number.isInteger(id) || (id as number) < 0) bad('prompt', `prompt token ids must be integers >= 0, got ${JSON.stringify(id)} at index ${i}`);
  });
  return prompt as readonly number[];
}

/** Validates a `/v1/completions` body. Throws OpenAIError(400). */
export function parseCompletionRequest(raw: unknown): ParsedRequest {
  const body = asObject(raw);
  return common(body, parsePrompt(body.prompt), ['max_tokens']);
}

/**
 * Checks a token-id prompt against the served model's vocabulary size (when its model-config
 * gives one; the engine checks again either way). Throws OpenAIError(400).
 */
export function checkPromptVocab(p: ParsedRequest, vocabSize: number | undefined): void {
  if (typeof p.prompt === 'string' || vocabSize === undefined) return;
  p.prompt.forEach((id, i) => {
    if (id >= vocabSize) bad('prompt', `prompt token id ${id} at index ${i} is outside the model's vocabulary (0..${vocabSize - 1})`);
  });
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
    return parts.join('');
  }
  return bad(`messages[${i}].content`, 'content must be a string or a list of text parts');
}

/** Validates a `/v1/chat/completions` body and applies the chat template. Throws OpenAIError(400). */
export function parseChatRequest(raw: unknown): ParsedRequest & { readonly messages: readonly ChatMessage[] } {
  const body = asObject(raw);
  const msgs = body.messages;
  if (!Array.isArray(msgs) || msgs.length === 0) bad('messages', 'messages must be a non-empty list of {role, content}');
  const messages: ChatMessage[] = msgs.map((m: unknown, i) => {
    const o = m as Obj;
    if (typeof m !== 'object' || m === null) bad(`messages[${i}]`, 'each message must be an object {role, content}');
    if (typeof o.role !== 'string' || !ROLES.has(o.role)) bad(`messages[${i}].role`, `role must be one of ${[...ROLES].join(', ')}`);
    return { role: o.role as string, content: messageContent(o.content, i) };
  });
  return { ...common(body, applyChatTemplate(messages), ['max_completion_tokens', 'max_tokens']), messages };
}
