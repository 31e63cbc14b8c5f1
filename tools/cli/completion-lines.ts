/**
 * The lines of the JSONL input of `tsserve generate` and `tsserve speak`, checked by the server's own `/v1/completions`
 * rules (frontend/openai/params.ts, request-prompts.ts): the same fields, the same defaults
 * (max_tokens 16, capped to what is left of max_model_len) and the same messages, each after the
 * `FILE:LINE` it was read at. A field the server refuses is refused here too, never ignored: the
 * CLI once dropped every field but ten, so `frequency_penalty` or `logit_bias` changed nothing
 * offline and the output differed from the server's for the same line.
 */
import { TextDecoder } from 'node:util';
import type { GenSamplingParams } from '../../schema/engine-ipc.js';
import { OpenAIError } from '../../frontend/http/openai-errors.js';
import type { ModelVocab } from '../../frontend/generation/model-vocab.js';
import type { ParsedRequest } from '../../frontend/openai/params.js';
import { parseCompletionRequest } from '../../frontend/openai/params.js';
import { readyPrompts } from '../../frontend/openai/request-prompts.js';

/** One input line, its fields checked (what needs the model is checked by `readyLine`). */
export interface InputLine {
  readonly id: unknown;
  /** Where it was read (`FILE:LINE`), for every message about it. */
  readonly where: string;
  readonly prompt: string | readonly number[];
  readonly request: ParsedRequest;
}

/** A line ready for the engine: the prompt's token ids and its params with max_tokens set. */
export interface ReadyLine {
  readonly line: InputLine;
  readonly ids: readonly number[];
  /** The prompt as text (echo). */
  readonly text: string;
  readonly params: GenSamplingParams & { readonly max_tokens: number };
}

/** What one command adds to the server's checks. */
export interface LineRules {
  /** Its name, for messages. */
  readonly command: string;
  /** The model's name as the server would serve it: a line's "model", when given, must be it. */
  readonly model: string;
  /** A rule of its own: a message, or null. */
  readonly check?: (request: ParsedRequest) => string | null;
}

/**
 * A body copied from a request to the server may name its model and say `stream: false`; the
 * model is --model's and every answer is written whole, so another model or `stream: true` is
 * refused by name, as the server refuses what it does not take.
 */
function offlineProblem(body: Readonly<Record<string, unknown>>, rules: LineRules): string | null {
  if (body.model !== undefined && body.model !== null && body.model !== rules.model) {
    return `model: ${JSON.stringify(body.model)} is not the model of --model (${rules.model}); leave it out`;
  }
  if (body.stream === true) return `stream: not taken by ${rules.command} (every answer is written whole)`;
  return null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A line's text, or null when its bytes are not UTF-8. */
function decode(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/** One line's fields checked; a string is the problem. */
function parseLine(raw: string, where: string, index: number, rules: LineRules): InputLine | string {
  let obj: unknown;
  try {
    obj = JSON.parse(raw);
  } catch (e) {
    return `not JSON (${(e as Error).message})`;
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return 'must be a JSON object';
  const { id, ...body } = obj as Record<string, unknown>;
  const offline = offlineProblem(body, rules);
  if (offline !== null) return offline;
  let request: ParsedRequest;
  try {
    request = parseCompletionRequest({ ...body, model: 'offline' });
  } catch (e) {
    if (e instanceof OpenAIError) return e.message;
    throw e;
  }
  // The server's list of prompts is one answer with several prompts; a line is one prompt.
  if (request.prompts.length !== 1)
    return `prompt: one prompt per line (a string or a list of token ids), got a list of ${request.prompts.length}`;
  const own = rules.check?.(request) ?? null;
  if (own !== null) return own;
  return { id: id ?? index, where, prompt: request.prompts[0]!, request };
}

/**
 * Parses the JSONL bytes of `file`: a UTF-8 BOM at the start is skipped, `\r\n` ends a line as
 * `\n` does, blank lines are skipped. Returns the lines, or one message per bad line.
 */
export function parseInput(
  bytes: Uint8Array,
  file: string,
  rules: LineRules,
): { lines: InputLine[]; problems: string[] } {
  const lines: InputLine[] = [];
  const problems: string[] = [];
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let from = start;
  for (let n = 1; from <= bytes.length; n++) {
    let to = bytes.indexOf(0x0a, from);
    if (to < 0) to = bytes.length;
    const where = `${file}:${n}`;
    const text = decode(bytes.subarray(from, to));
    from = to + 1;
    if (text === null) {
      problems.push(`${where}: not valid UTF-8`);
      continue;
    }
    if (text.trim() === '') continue;
    const r = parseLine(text, where, lines.length, rules);
    if (typeof r === 'string') problems.push(`${where}: ${r}`);
    else lines.push(r);
  }
  return { lines, problems };
}

/** The line made ready for the model of `vocab`, or the server's message for it. */
export function readyLine(line: InputLine, vocab: ModelVocab): ReadyLine | string {
  try {
    const [r] = readyPrompts(line.request, vocab);
    return { line, ids: r!.ids, text: r!.text, params: { ...line.request.params, max_tokens: r!.maxTokens } };
  } catch (e) {
    if (e instanceof OpenAIError) return `${line.where}: ${e.message}`;
    throw e;
  }
}
