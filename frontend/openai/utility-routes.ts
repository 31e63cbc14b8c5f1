/**
 * vLLM's utility endpoints on the inference listener: `POST /tokenize` (`{model, prompt}` or
 * `{model, messages}` rendered with the model's chat template → `{count, max_model_len, tokens,
 * token_strs}`), `POST /detokenize`
 * (`{model, tokens}` → `{prompt}`) and `GET /version` (`{version}`). `model` may be left out
 * when one generation model is served. Errors use OpenAI's shape, as on `/v1`.
 */
import { routeTable } from '../http/route-table.js';
import type { RequestHandler, Response, Router } from 'express';
import { packageVersion } from '../../schema/config/stability.js';
import type { GenerationTarget } from './generation-target.js';
import { OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import { vocabOf } from '../generation/model-vocab.js';
import { whenVocabReady } from '../generation/load-vocab.js';
import { asObject, chatPart, refuseUnsupported } from './params.js';

/** What the routes need from the server. */
export interface UtilityRoutesOptions {
  readonly lookup: (name: string) => GenerationTarget | undefined;
  readonly list: () => readonly GenerationTarget[];
  /** The other models /v1/models lists (pipelines): named in the refusal rather than "does not exist". */
  readonly listOthers?: () => readonly { readonly id: string; readonly answers?: string }[];
  /** The JSON body reader of the `/v1` routes (same limits). */
  readonly json: RequestHandler;
}

const TOKENIZE_FIELDS: ReadonlySet<string> = new Set([
  'model',
  'prompt',
  'messages',
  'add_special_tokens',
  'return_token_strs',
  'add_generation_prompt',
  'chat_template_kwargs',
]);
const DETOKENIZE_FIELDS: ReadonlySet<string> = new Set(['model', 'tokens']);

type Obj = Readonly<Record<string, unknown>>;

function modelOf(body: Obj, opts: UtilityRoutesOptions): GenerationTarget {
  const name = body.model;
  if (name === undefined || name === null) {
    const all = opts.list();
    if (all.length === 1) return all[0]!;
    throw new OpenAIError(400, `model is required when ${all.length} generation models are served`, 'model');
  }
  if (typeof name !== 'string') throw new OpenAIError(400, 'model must be a string', 'model');
  const m = opts.lookup(name);
  if (m === undefined) {
    const other = (opts.listOthers?.() ?? []).find((o) => o.id === name);
    if (other !== undefined)
      throw new OpenAIError(
        400,
        `The model \`${name}\` answers ${other.answers ?? '/v1/chat/completions'} only.`,
        'model',
      );
    throw new OpenAIError(404, `The model \`${name}\` does not exist.`, 'model', 'model_not_found');
  }
  return m;
}

function flag(body: Obj, key: string, dflt: boolean): boolean {
  const v = body[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'boolean') throw new OpenAIError(400, `${key} must be true or false, got ${JSON.stringify(v)}`, key);
  return v;
}

/** vLLM's refusal of a /tokenize or /detokenize input longer than max_model_len. */
function tooLong(n: number, maxModelLen: number, operation: string): void {
  if (n > maxModelLen)
    throw new OpenAIError(
      400,
      `This model's maximum context length is ${maxModelLen} tokens. However, you requested ${n} tokens in the input for ${operation}. Please reduce the length of the input.`,
    );
}

function answer(res: Response, f: () => object): void {
  try {
    res.json(f());
  } catch (e) {
    if (e instanceof OpenAIError) return sendOpenAIError(res, e);
    throw e;
  }
}

/**
 * `answer` for a body of `fields` once the named model's vocabulary is loaded (a problem with the
 * body or the model is answered at once).
 */
function answerWith(
  res: Response,
  raw: unknown,
  fields: ReadonlySet<string>,
  opts: UtilityRoutesOptions,
  f: (model: GenerationTarget, body: Obj) => object,
): void {
  let body: Obj;
  let model: GenerationTarget;
  try {
    body = asObject(raw);
    refuseUnsupported(body, fields);
    model = modelOf(body, opts);
  } catch (e) {
    if (e instanceof OpenAIError) return sendOpenAIError(res, e);
    throw e;
  }
  whenVocabReady(model, res, () => answer(res, () => f(model, body)));
}

/** Builds the router of `/tokenize`, `/detokenize` and `/version`. */
export function utilityRoutes(opts: UtilityRoutesOptions): Router {
  const r = routeTable();
  r.get('/version', (_req, res) => {
    res.json({ version: packageVersion() });
  });
  r.post('/tokenize', opts.json, (req, res) =>
    answerWith(res, req.body, TOKENIZE_FIELDS, opts, (model, body) => {
      const vocab = vocabOf(model);
      const hasPrompt = body.prompt !== undefined && body.prompt !== null;
      if (hasPrompt === (body.messages !== undefined && body.messages !== null))
        throw new OpenAIError(400, 'give exactly one of prompt (a string) or messages', 'prompt');
      if (hasPrompt && typeof body.prompt !== 'string') throw new OpenAIError(400, 'prompt must be a string', 'prompt');
      // The chat route renders and tokenizes its template's text the same way (vLLM's defaults:
      // special tokens added to a prompt, not to a rendered template that writes them itself).
      const text = hasPrompt ? (body.prompt as string) : vocab.chatTemplate.render(chatPart(body));
      const special = flag(body, 'add_special_tokens', hasPrompt || vocab.chatAddsSpecialTokens);
      // Counted first (bounded, frontend/generation/model-vocab.ts): a 1 MiB prompt is not tokenized whole to be refused.
      tooLong(vocab.count(text, special), vocab.maxModelLen, 'tokenization');
      const tokens = vocab.encode(text, special);
      tooLong(tokens.length, vocab.maxModelLen, 'tokenization');
      const strs = flag(body, 'return_token_strs', false) ? tokens.map((t) => vocab.tokenText(t)) : null;
      return { count: tokens.length, max_model_len: vocab.maxModelLen, tokens, token_strs: strs };
    }),
  );
  r.post('/detokenize', opts.json, (req, res) =>
    answerWith(res, req.body, DETOKENIZE_FIELDS, opts, (model, body) => {
      const vocab = vocabOf(model);
      const t = body.tokens;
      if (
        !Array.isArray(t) ||
        !t.every((x) => Number.isInteger(x) && (x as number) >= 0 && (x as number) < vocab.vocabSize)
      ) {
        throw new OpenAIError(400, `tokens must be a list of token ids in 0..${vocab.vocabSize - 1}`, 'tokens');
      }
      tooLong(t.length, vocab.maxModelLen, 'detokenization');
      return { prompt: vocab.decode(t as number[]) };
    }),
  );
  return r.router;
}
