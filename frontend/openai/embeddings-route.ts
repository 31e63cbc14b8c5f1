/**
 * OpenAI's `POST /v1/embeddings`, as vLLM serves pooling models: `input` is a string, a list of
 * strings, a list of token ids or a list of such lists; each input is tokenized here (special
 * tokens added, as the model's tokenizer.json says; token ids are taken as they are), checked
 * against the model's length, and run as one job of the model's batcher. `encoding_format`
 * `float` or `base64` (little-endian float32, as OpenAI's client decodes it); `dimensions` only
 * when the model-config lists it (Matryoshka). Usage counts the real tokens. Each admitted request
 * counts in TorchServe's `ts_inference_requests_total` (`model_version="default"`, with its
 * latency and queue µs when answered); each answered request
 * counts in `ts_embedding_requests_total`, its tokens in `ts_embedding_prompt_tokens_total`, its
 * arrival-to-answer time in `ts_embedding_request_latency_seconds`.
 */
import { randomUUID } from 'crypto';
import { performance } from 'perf_hooks';
import type { Request, Response, Router } from 'express';
import { routeTable } from '../http/route-table.js';
import type { EmbeddingJobBody } from '../../schema/text/embedding-options.js';
import { excerpt } from '../../schema/files/model-file.js';
import { msAsUs } from '../../schema/elapsed.js';
import type { BodyLimits } from '../models/body-limits.js';
import { jsonBody } from '../http/json-body.js';
import type { EmbeddingTarget } from '../embeddings/embedding-model.js';
import type { JobOutcome } from '../batching/job.js';
import { OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import { EMBEDDINGS_FIELDS } from './allowed-fields.js';
import { traceIds } from '../metrics/exposition/trace-ids.js';
import { exemplarTraceId, requestSpanOf, startRequestSpan, tracingOn } from '../tracing/request-span.js';
import { asObject, refuseUnsupported } from './params.js';

/** What the route needs from the server. */
export interface EmbeddingsRouteOptions {
  readonly lookup: (name: string) => EmbeddingTarget | undefined;
  /** Whether a model of another kind has this name (refused 400 rather than "does not exist"). */
  readonly exists: (name: string) => boolean;
  readonly bodyLimits?: BodyLimits;
}

type Obj = Readonly<Record<string, unknown>>;

/** A bounded, escaped echo of a request value. */
function shown(v: unknown): string {
  return excerpt(typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v)), 40);
}

/** An input as the request gave it: text to tokenize, or token ids. */
type RawInput = string | readonly number[];

function inputsOf(v: unknown, maxInputs: number): RawInput[] {
  const bad = (): never => {
    throw new OpenAIError(
      400,
      "'input' must be a non-empty string, a list of non-empty strings, a list of token ids, or a list of such lists",
      'input',
    );
  };
  if (typeof v === 'string') return v === '' ? bad() : [v];
  if (!Array.isArray(v) || v.length === 0) return bad();
  if (v.every((x) => typeof x === 'number')) return [v as number[]];
  if (v.length > maxInputs)
    throw new OpenAIError(400, `'input' has ${v.length} entries; at most ${maxInputs} in one request`, 'input');
  return v.map((x: unknown) => {
    if (typeof x === 'string' && x !== '') return x;
    if (Array.isArray(x) && x.length > 0 && x.every((n) => typeof n === 'number')) return x as number[];
    return bad();
  });
}

function encodingOf(body: Obj): 'float' | 'base64' {
  const f = body['encoding_format'] ?? 'float';
  if (f === 'float' || f === 'base64') return f;
  throw new OpenAIError(400, `'encoding_format' must be 'float' or 'base64', got ${shown(f)}`, 'encoding_format');
}

function dimensionsOf(body: Obj, model: EmbeddingTarget): number | undefined {
  const d = body['dimensions'];
  if (d === undefined || d === null) return undefined;
  const name = model.config.name;
  if (model.options.dimensions.length === 0)
    throw new OpenAIError(
      400,
      `Model "${name}" does not support matryoshka representation, changing output dimensions will lead to poor results.`,
      'dimensions',
    );
  if (typeof d !== 'number' || !model.options.dimensions.includes(d))
    throw new OpenAIError(
      400,
      `'dimensions' must be one of ${model.options.dimensions.join(', ')} for model "${name}", got ${shown(d)}`,
      'dimensions',
    );
  return d;
}

/** Tokenizes (or checks) one input against the model. */
function tokenized(model: EmbeddingTarget, raw: RawInput, where: string, dims: number | undefined): EmbeddingJobBody {
  const tk = model.tokenizer;
  if (typeof tk === 'string') throw new OpenAIError(503, tk);
  let ids: readonly number[];
  let typeIds: readonly number[];
  if (typeof raw === 'string') {
    const e = tk.encodeFull(raw);
    ids = e.ids;
    typeIds = e.tokenTypeIds ?? ids.map(() => 0);
  } else {
    const vocab = model.vocabSize;
    const badAt = raw.findIndex((t) => !Number.isInteger(t) || t < 0 || t >= vocab);
    if (badAt !== -1)
      throw new OpenAIError(
        400,
        `${where}[${badAt}] is ${shown(raw[badAt])}: token ids are integers in 0..${vocab - 1}`,
        'input',
      );
    ids = raw;
    typeIds = raw.map(() => 0);
  }
  const max = model.options.maxModelLen;
  if (ids.length > max)
    throw new OpenAIError(
      400,
      `This model's maximum context length is ${max} tokens. However, you requested ${ids.length} tokens in the input for embedding generation. Please reduce the length of the input.`,
      'input',
    );
  return { ids, typeIds, ...(dims !== undefined ? { dimensions: dims } : {}) };
}

function vectorOf(v: Float32Array, format: 'float' | 'base64'): number[] | string {
  if (format === 'float') return Array.from(v);
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

/** Builds the router of `POST /v1/embeddings`. */
export function embeddingsRouter(opts: EmbeddingsRouteOptions): Router {
  const r = routeTable();
  const json = jsonBody(opts.bodyLimits, (res, status, message) =>
    sendOpenAIError(res, new OpenAIError(status, message)),
  );
  r.post('/v1/embeddings', json, (req, res) => {
    const arrivalMs = performance.now();
    if (tracingOn()) startRequestSpan(req, res, '/v1/embeddings', arrivalMs, { 'gen_ai.operation.name': 'embeddings' });
    const run = (): void => {
      try {
        serve(req, res, opts, arrivalMs);
      } catch (e) {
        if (e instanceof OpenAIError) return sendOpenAIError(res, e);
        throw e;
      }
    };
    // A front's proxy loads the tokenizer in the background: its first requests wait for it.
    const name = (req.body as { model?: unknown } | null)?.model;
    const loading = typeof name === 'string' ? opts.lookup(name)?.tokenizerLoaded?.() : undefined;
    if (loading === undefined) return run();
    loading
      .then(run)
      .catch(() => sendOpenAIError(res, new OpenAIError(500, 'internal error while tokenizing the input')));
  });
  return r.router;
}

function serve(req: Request, res: Response, opts: EmbeddingsRouteOptions, arrivalMs: number): void {
  const body = asObject(req.body);
  refuseUnsupported(body, EMBEDDINGS_FIELDS);
  const name = body['model'];
  if (typeof name !== 'string') throw new OpenAIError(400, "'model' is required (a string)", 'model');
  const model = opts.lookup(name);
  const shown = name.slice(0, 100);
  if (model === undefined && opts.exists(name))
    throw new OpenAIError(400, `The model \`${shown}\` does not serve /v1/embeddings.`, 'model');
  if (model === undefined)
    throw new OpenAIError(404, `The model \`${shown}\` does not exist.`, 'model', 'model_not_found');
  if (body['user'] !== undefined && typeof body['user'] !== 'string')
    throw new OpenAIError(400, "'user' must be a string", 'user');
  const format = encodingOf(body);
  const dims = dimensionsOf(body, model);
  const input = body['input'];
  const flat = Array.isArray(input) && input.every((x) => typeof x === 'number');
  const jobs = inputsOf(input, model.options.maxInputs).map((raw, i) =>
    tokenized(model, raw, flat ? 'input' : `input[${i}]`, dims),
  );
  const id = `embd-${randomUUID().replaceAll('-', '')}`;
  res.setHeader('x-request-id', id);
  let gone = false;
  res.once('close', () => {
    if (!res.writableFinished) gone = true;
  });
  const promptTokens = jobs.reduce((n, j) => n + j.ids.length, 0);
  model.inference.requests.record(1);
  const span = requestSpanOf(req);
  const traceId = exemplarTraceId(req, span);
  if (traceId !== undefined) for (let i = 0; i < jobs.length; i++) traceIds.set(`${id}-${i}`, traceId);
  span?.set({
    'gen_ai.request.model': model.config.name,
    'gen_ai.response.model': model.config.name,
    'gen_ai.request.id': id,
    'gen_ai.response.id': id,
    'gen_ai.usage.input_tokens': promptTokens,
    'gen_ai.usage.prompt_tokens': promptTokens,
  });
  const submitMs = performance.now();
  const embedded = (o: JobOutcome): JobOutcome => {
    // Each input is a job of its own: its queue, batch and handler spans.
    span?.batched(submitMs, o.queueUs, o.handlerUs, performance.now());
    return o;
  };
  Promise.all(jobs.map((j, i) => model.embed(`${id}-${i}`, j, () => gone).then(embedded)))
    .then((outcomes) => {
      // The request waited as long as its longest-queued input.
      model.inference.latencyUs.record(msAsUs(performance.now() - arrivalMs));
      model.inference.queueUs.record(Math.max(...outcomes.map((o) => o.queueUs)));
      const failed = outcomes.find((o) => o.status !== 200 || !(o.body instanceof Float32Array));
      if (failed !== undefined) {
        const b = failed.body as { message?: unknown } | null;
        const msg =
          typeof b?.message === 'string' ? b.message : `the model failed to embed the input (${failed.status})`;
        return sendOpenAIError(res, new OpenAIError(failed.status === 200 ? 500 : failed.status, msg));
      }
      model.series.requests.record(1);
      model.series.promptTokens.record(promptTokens);
      model.series.latencySec.record((performance.now() - arrivalMs) / 1000);
      if (gone) return;
      res.json({
        id,
        object: 'list',
        created: Math.floor(Date.now() / 1000),
        model: model.config.name,
        data: outcomes.map((o, index) => ({
          object: 'embedding',
          index,
          embedding: vectorOf(o.body as Float32Array, format),
        })),
        usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      });
    })
    .catch((e: unknown) => {
      // Never an unhandled rejection (it would end the process): the request gets a 500.
      sendOpenAIError(res, new OpenAIError(500, `answering the embeddings failed: ${String(e).slice(0, 200)}`));
    });
}
