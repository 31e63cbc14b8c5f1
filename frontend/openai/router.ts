/**
 * The OpenAI-compatible routes on the inference listener: `POST /v1/completions`,
 * `POST /v1/chat/completions` (both with `stream: true` as server-sent events) and
 * `GET /v1/models`. The arrival time is stamped before the body is parsed (TTFT and e2e start
 * there, as in vLLM). A client that disconnects before the answer is complete has its request
 * aborted in the engine, where it finishes with `abort` (and counts).
 */
import { performance } from 'perf_hooks';
import express from 'express';
import type { ErrorRequestHandler, Request, RequestHandler, Response, Router } from 'express';
import type { GenRequestOutput } from '../../schema/engine-ipc.js';
import type { GenerationModel } from '../generation/generation-model.js';
import { generationTiming } from '../http/server-timing.js';
import type { BodyLimits } from '../http/body-limits.js';
import { jsonBody } from '../http/json-body.js';
import { parseTraceparent, traceIds } from '../metrics/exposition/trace-ids.js';
import { ChoiceCollector } from './choice-collector.js';
import type { Choice } from './choice-collector.js';
import { errorBody, OpenAIError, sendOpenAIError } from './errors.js';
import type { ParsedRequest } from './params.js';
import { checkPromptVocab, parseChatRequest, parseCompletionRequest } from './params.js';

/** The part of a generation model the routes use (a front process relays it to the primary's). */
export type GenerationTarget = Pick<GenerationModel, 'config' | 'vocabSize' | 'generate'>;

/** What the routes need from the server. */
export interface OpenAIRouterOptions {
  readonly lookup: (name: string) => GenerationTarget | undefined;
  readonly list: () => readonly GenerationTarget[];
  /** Largest body in bytes (default 1 MiB); `bodyLimits.maxBytes` wins when both are given. */
  readonly maxRequestSizeBytes?: number;
  /** Bounds on bodies: size, JSON depth and elements, timeouts (default: DEFAULT_BODY_LIMITS). */
  readonly bodyLimits?: BodyLimits;
}

type Kind = 'completion' | 'chat';

const ARRIVAL = Symbol('arrivalMs');
type Stamped = Request & { [ARRIVAL]?: number };

/** Builds the `/v1` router. */
export function openaiRouter(opts: OpenAIRouterOptions): Router {
  const r = express.Router();
  const stamp: RequestHandler = (req, _res, next) => { (req as Stamped)[ARRIVAL] = performance.now(); next(); };
  // Read under the server's body limits (413 before the body is read, 415, 408, JSON bounds).
  const json = jsonBody(opts.bodyLimits ?? opts.maxRequestSizeBytes, (res, status, message) => sendOpenAIError(res, new OpenAIError(status, message)));
  r.post('/v1/completions', stamp, json, handler(opts, 'completion'));
  r.post('/v1/chat/completions', stamp, json, handler(opts, 'chat'));
  r.get('/v1/models', (_req, res) => {
    const created = Math.floor(Date.now() / 1000);
    res.json({
      object: 'list',
      data: opts.list().map((m) => ({ id: m.config.name, object: 'model', created, owned_by: 'tsserve', root: m.config.name, parent: null })),
    });
  });
  const onError: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (!req.path.startsWith('/v1/')) return next(err);
    const e = (typeof err === 'object' && err !== null ? err : {}) as { type?: string; message?: string; limit?: number };
    if (e.type === 'entity.too.large') return sendOpenAIError(res, new OpenAIError(413, `request body exceeds the limit of ${String(e.limit)} bytes`));
    if (e.type === 'entity.parse.failed') return sendOpenAIError(res, new OpenAIError(400, `invalid JSON body: ${e.message ?? ''}`));
    return sendOpenAIError(res, new OpenAIError(500, e.message ?? String(err)));
  };
  r.use(onError);
  return r;
}

function handler(opts: OpenAIRouterOptions, kind: Kind): RequestHandler {
  return (req, res) => {
    const arrivalMs = (req as Stamped)[ARRIVAL] ?? performance.now();
    let parsed: ParsedRequest;
    try {
      parsed = kind === 'chat' ? parseChatRequest(req.body) : parseCompletionRequest(req.body);
    } catch (e) {
      if (e instanceof OpenAIError) return sendOpenAIError(res, e);
      throw e;
    }
    const model = opts.lookup(parsed.model);
    if (model === undefined) {
      return sendOpenAIError(res, new OpenAIError(404, `The model \`${parsed.model}\` does not exist.`, 'model', 'model_not_found'));
    }
    try {
      checkPromptVocab(parsed, model.vocabSize);
    } catch (e) {
      if (e instanceof OpenAIError) return sendOpenAIError(res, e);
      throw e;
    }
    serve(model, parsed, kind, arrivalMs, res);
  };
}

function serve(model: GenerationTarget, p: ParsedRequest, kind: Kind, arrivalMs: number, res: Response): void {
  const collector = new ChoiceCollector(p.params.n);
  const created = Math.floor(Date.now() / 1000);
  const object = kind === 'chat' ? 'chat.completion' : 'text_completion';
  let id = '';
  let ended = false;
  const end = (): void => { ended = true; };
  const stream = p.stream ? new SseAnswer(res, kind, p.model, created, p.includeUsage) : null;
  let timing: string | undefined;
  const started = model.generate({ prompt: p.prompt, params: p.params, arrivalMs }, {
    // Before the last output: a plain answer sends it as a header, a stream as a trailer.
    onTimings: (t) => { timing = generationTiming(t); },
    onOutput: (o: GenRequestOutput) => {
      const c = collector.add(o);
      if (c === undefined || ended) return;
      if (stream !== null) {
        stream.output(id, o, c);
        if (collector.done) {
          if (collector.error) stream.error(500, 'the engine failed while generating');
          else stream.finish(id, collector, timing);
          end();
        }
        return;
      }
      if (!collector.done) return;
      end();
      if (timing !== undefined) res.setHeader('Server-Timing', timing);
      if (collector.error) {
        res.status(500).json(errorBody(500, 'the engine failed while generating'));
        return;
      }
      res.json({
        id, object, created, model: p.model,
        choices: collector.choices.map((ch, index) => choiceBody(kind, ch, index)),
        usage: collector.usage(),
      });
    },
    onError: (status, message) => {
      if (ended) return;
      end();
      if (stream !== null && stream.started) stream.error(status, message);
      else res.status(status).json(errorBody(status, message));
    },
  });
  if ('status' in started) {
    end();
    sendOpenAIError(res, new OpenAIError(started.status, started.message));
    return;
  }
  id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${started.requestId}`;
  res.setHeader('x-request-id', started.requestId);
  // Exemplars of this request's metrics carry its W3C trace id, when it sent one.
  traceIds.set(started.requestId, parseTraceparent(res.req.headers.traceparent));
  stream?.start();
  res.on('close', () => {
    if (!ended) {
      ended = true;
      started.abort();
    }
  });
}

function choiceBody(kind: Kind, c: Choice, index: number): object {
  if (kind === 'chat') {
    return { index, message: { role: 'assistant', content: c.text }, logprobs: null, finish_reason: c.finishReason, stop_reason: c.stopReason };
  }
  return { index, text: c.text, logprobs: null, finish_reason: c.finishReason, stop_reason: c.stopReason };
}

/** Server-sent events in OpenAI's chunk format; `data: [DONE]` ends the stream. */
class SseAnswer {
  started = false;
  private readonly roleSent = new Set<number>();
  private readonly object: string;

  constructor(
    private readonly res: Response,
    private readonly kind: Kind,
    private readonly model: string,
    private readonly created: number,
    private readonly includeUsage: boolean,
  ) {
    this.object = kind === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  }

  start(): void {
    this.started = true;
    this.res.status(200);
    this.res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    this.res.setHeader('Cache-Control', 'no-cache');
    this.res.setHeader('Connection', 'keep-alive');
    // The timings are known only at the end: announced here, sent as a trailer by finish().
    this.res.setHeader('Trailer', 'Server-Timing');
    this.res.flushHeaders();
  }

  output(id: string, o: GenRequestOutput, c: Choice): void {
    const finish = o.finishReason ?? null;
    if (o.text === '' && finish === null) return;
    if (this.kind === 'chat') {
      if (!this.roleSent.has(o.index)) {
        this.roleSent.add(o.index);
        this.send({ id, object: this.object, created: this.created, model: this.model, choices: [{ index: o.index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
      }
      const delta = o.text === '' ? {} : { content: o.text };
      this.send({ id, object: this.object, created: this.created, model: this.model, choices: [{ index: o.index, delta, logprobs: null, finish_reason: finish, stop_reason: finish === null ? null : c.stopReason }] });
      return;
    }
    this.send({ id, object: this.object, created: this.created, model: this.model, choices: [{ index: o.index, text: o.text, logprobs: null, finish_reason: finish, stop_reason: finish === null ? null : c.stopReason }] });
  }

  finish(id: string, collector: ChoiceCollector, timing?: string): void {
    if (this.includeUsage) this.send({ id, object: this.object, created: this.created, model: this.model, choices: [], usage: collector.usage() });
    if (timing !== undefined) this.res.addTrailers({ 'Server-Timing': timing });
    this.res.end('data: [DONE]\n\n');
  }

  error(status: number, message: string): void {
    this.send(errorBody(status, message));
    this.res.end('data: [DONE]\n\n');
  }

  private send(obj: object): void {
    this.res.write(`data: ${JSON.stringify(obj)}\n\n`);
  }
}
