/**
 * vLLM's utility endpoints on the inference listener: `POST /tokenize` (`{model, prompt}` or
 * `{model, messages}` → `{count, max_model_len, tokens, token_strs}`), `POST /detokenize`
 * (`{model, tokens}` → `{prompt}`) and `GET /version` (`{version}`). `model` may be left out
 * when one generation model is served. Errors use OpenAI's shape, as on `/v1`.
 */
import { routeTable } from '../http/route-table.js';
import type { RequestHandler, Response, Router } from 'express';
import { packageVersion } from '../../schema/config/stability.js';
import type { GenerationTarget } from './generation-target.js';
import { applyChatTemplate } from './chat-template.js';
import { OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import { vocabOf } from '../generation/model-vocab.js';
import { asObject, parseMessages, refuseUnsupported } from './params.js';

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

function answer(res: Response, f: () => object): void {
  try {
    res.json(f());
  } catch (e) {
    if (e instanceof OpenAIError) return sendOpenAIError(res, e);
    throw e;
  }
}

/** Builds the router of `/tokenize`, `/detokenize` and `/version`. */
export function utilityRoutes(opts: UtilityRoutesOptions): Router {
  const r = routeTable();
  r.get('/version', (_req, res) => {
    res.json({ version: packageVersion() });
  });
  r.post('/tokenize', opts.json, (req, res) =>
    answer(res, () => {
      const body = asObject(req.body);
      refuseUnsupported(body, TOKENIZE_FIELDS);
      const vocab = vocabOf(modelOf(body, opts));
      const hasPrompt = body.prompt !== undefined && body.prompt !== null;
      if (hasPrompt === (body.messages !== undefined && body.messages !== null))
        throw new OpenAIError(400, 'give exactly one of prompt (a string) or messages', 'prompt');
      if (hasPrompt && typeof body.prompt !== 'string') throw new OpenAIError(400, 'prompt must be a string', 'prompt');
      // The chat route tokenizes its template's text the same way, BOS included.
      const text = hasPrompt ? (body.prompt as string) : applyChatTemplate(parseMessages(body.messages));
      const tokens = vocab.encode(text, flag(body, 'add_special_tokens', true));
      const strs = flag(body, 'return_token_strs', false) ? tokens.map((t) => vocab.tokenText(t)) : null;
      return { count: tokens.length, max_model_len: vocab.maxModelLen, tokens, token_strs: strs };
    }),
  );
  r.post('/detokenize', opts.json, (req, res) =>
    answer(res, () => {
      const body = asObject(req.body);
      refuseUnsupported(body, DETOKENIZE_FIELDS);
      const vocab = vocabOf(modelOf(body, opts));
      const t = body.tokens;
      if (
        !Array.isArray(t) ||
        !t.every((x) => Number.isInteger(x) && (x as number) >= 0 && (x as number) < vocab.vocabSize)
      ) {
        throw new OpenAIError(400, `tokens must be a list of token ids in 0..${vocab.vocabSize - 1}`, 'tokens');
      }
      return { prompt: vocab.decode(t as number[]) };
    }),
  );
  return r.router;
}
