/**
 * The OpenAI-compatible routes on the inference listener: `POST /v1/completions`,
 * `POST /v1/chat/completions` (both with `stream: true` as server-sent events) and
 * `GET /v1/models`, plus vLLM's `/tokenize`, `/detokenize` and `/version` (utility-routes.ts).
 * Prompts are tokenized here (request-prompts.ts), so max_tokens defaults to what is left of
 * max_model_len; a list of prompts runs as one engine request each (fan-out.ts). The arrival
 * time is stamped before the body is parsed (TTFT and e2e start there, as in vLLM). A client that disconnects before the answer is complete has its request
 * aborted in the engine, where it finishes with `abort` (and counts).
 */
import { performance } from 'perf_hooks';
import { routeTable } from '../http/route-table.js';
import type { ErrorRequestHandler, Request, RequestHandler, Response, Router } from 'express';
import type { GenRequestOutput } from '../../schema/engine-ipc.js';
import type { GenerationTarget } from './generation-target.js';
import { generationTiming } from '../http/server-timing.js';
import type { BodyLimits } from '../models/body-limits.js';
import { jsonBody } from '../http/json-body.js';
import { traceIds } from '../metrics/exposition/trace-ids.js';
import { exemplarTraceId, requestSpanOf, startRequestSpan, tracingOn } from '../tracing/request-span.js';
import { generationSpan } from './generation-span.js';
import { chatHookTook } from './chat-hooks.js';
import { AnswerBody } from './answer-body.js';
import { ChoiceCollector } from './choice-collector.js';
import { errorBody, OpenAIError, sendOpenAIError } from '../http/openai-errors.js';
import { generateAll } from './fan-out.js';
import { choiceBody } from './choice-body.js';
import type { Kind, RenderContext } from './choice-body.js';
import { SseAnswer } from './sse-answer.js';
import { vocabOf } from '../generation/model-vocab.js';
import { whenVocabReady } from '../generation/load-vocab.js';
import type { ParsedRequest } from './params.js';
import { parseChatRequest, parseCompletionRequest } from './params.js';
import { readyOrRefused } from './request-prompts.js';
import { withSamplingDefaults } from './sampling-defaults.js';
import { clientRequestId } from './request-id.js';
import { utilityRoutes } from './utility-routes.js';
import { devModeFromEnv, sleepRoutes } from './sleep-routes.js';
import { echoName } from '../../schema/echo.js';
import { InferenceCount } from '../models/inference-count.js';
import type { ModelSeries } from '../models/frontend-series.js';

/** What the routes need from the server. */
export interface OpenAIRouterOptions {
  readonly lookup: (name: string) => GenerationTarget | undefined;
  readonly list: () => readonly GenerationTarget[];
  /** Models of other kinds that answer on these routes (a pipeline's chat), listed by `GET /v1/models` too. */
  readonly listOthers?: () => ReadonlyArray<{
    readonly id: string;
    readonly maxModelLen: number;
    /** The one route it answers (default `/v1/chat/completions`). */
    readonly answers?: string;
  }>;
  /** Largest body in bytes (default 1 MiB); `bodyLimits.maxBytes` wins when both are given. */
  readonly maxRequestSizeBytes?: number;
  /** Bounds on bodies: size, JSON depth and elements, timeouts (default: DEFAULT_BODY_LIMITS). */
  readonly bodyLimits?: BodyLimits;
  /** The model's TorchServe series (`ts_inference_requests_total`, …) a request counts in; none when absent. */
  readonly inferenceSeries?: (model: GenerationTarget) => ModelSeries;
  /** vLLM's dev mode (/sleep, /wake_up, /is_sleeping act); default `VLLM_SERVER_DEV_MODE=1`. */
  readonly devMode?: boolean;
  /** Why the dev-mode endpoints are off here, for their 404 (default: how to turn them on). */
  readonly devModeOff?: string;
}

const ARRIVAL = Symbol('arrivalMs');
type Stamped = Request & { [ARRIVAL]?: number };

/** Builds the `/v1` router. */
export function openaiRouter(opts: OpenAIRouterOptions): Router {
  const r = routeTable();
  // The request's span (tracing on) starts at the same arrival.
  const stamp =
    (route: string, operation: string): RequestHandler =>
    (req, res, next) => {
      const now = ((req as Stamped)[ARRIVAL] = performance.now());
      if (tracingOn()) startRequestSpan(req, res, route, now, { 'gen_ai.operation.name': operation });
      next();
    };
  // Read under the server's body limits (413 before the body is read, 415, 408, JSON bounds).
  const json = jsonBody(opts.bodyLimits ?? opts.maxRequestSizeBytes, (res, status, message) =>
    sendOpenAIError(res, new OpenAIError(status, message)),
  );
  r.post('/v1/completions', stamp('/v1/completions', 'text_completion'), json, handler(opts, 'completion'));
  r.post('/v1/chat/completions', stamp('/v1/chat/completions', 'chat'), json, handler(opts, 'chat'));
  const models = (): object[] => {
    const created = Math.floor(Date.now() / 1000);
    return [
      ...opts.list().map((m) => ({ id: m.config.name, maxModelLen: vocabOf(m).maxModelLen })),
      ...(opts.listOthers?.() ?? []),
    ].map((m) => ({
      id: m.id,
      object: 'model',
      created,
      owned_by: 'tsserve',
      root: m.id,
      parent: null,
      max_model_len: m.maxModelLen,
    }));
  };
  r.get('/v1/models', (_req, res) => {
    res.json({ object: 'list', data: models() });
  });
  // The client's models.retrieve(id): the same object as in the list.
  r.get('/v1/models/:model', (req, res) => {
    const m = models().find((o) => (o as { id: string }).id === req.params.model);
    if (m === undefined)
      sendOpenAIError(
        res,
        new OpenAIError(404, `The model \`${echoName(req.params.model)}\` does not exist.`, 'model', 'model_not_found'),
      );
    else res.json(m);
  });
  r.mount(sleepRoutes({ list: opts.list, devMode: opts.devMode ?? devModeFromEnv(), offReason: opts.devModeOff }));
  r.mount(
    utilityRoutes({
      lookup: opts.lookup,
      list: opts.list,
      ...(opts.listOthers !== undefined ? { listOthers: opts.listOthers } : {}),
      json,
    }),
  );
  const onError: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (!req.path.startsWith('/v1/') && req.path !== '/tokenize' && req.path !== '/detokenize') return next(err);
    const e = (typeof err === 'object' && err !== null ? err : {}) as {
      type?: string;
      message?: string;
      limit?: number;
      status?: unknown;
    };
    if (e.type === 'entity.too.large')
      return sendOpenAIError(res, new OpenAIError(413, `request body exceeds the limit of ${String(e.limit)} bytes`));
    if (e.type === 'entity.parse.failed')
      return sendOpenAIError(res, new OpenAIError(400, `invalid JSON body: ${e.message ?? ''}`));
    // Express marks the client's own errors (a path parameter that is not valid percent-encoding: 400).
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 500;
    return sendOpenAIError(res, new OpenAIError(status, e.message ?? String(err)));
  };
  r.use(onError);
  return r.router;
}

function handler(opts: OpenAIRouterOptions, kind: Kind): RequestHandler {
  return (req, res) => {
    const arrivalMs = (req as Stamped)[ARRIVAL] ?? performance.now();
    let parsed: ParsedRequest;
    let clientId: string | undefined;
    try {
      clientId = clientRequestId(req.headers);
      // Echoed on every answer, refusals too (vLLM's --enable-request-id-headers), so a client can match them.
      if (clientId !== undefined) res.setHeader('x-request-id', clientId);
      if (kind === 'chat' && chatHookTook(req, res, arrivalMs)) return;
      parsed = kind === 'chat' ? parseChatRequest(req.body) : parseCompletionRequest(req.body);
    } catch (e) {
      if (e instanceof OpenAIError) return sendOpenAIError(res, e);
      throw e;
    }
    const model = opts.lookup(parsed.model);
    if (model === undefined) {
      // A model /v1/models lists that answers chat only (a pipeline's spoken answers): say so.
      // A model /v1/models lists that answers one other route (a pipeline's chat, an encoder's embeddings): say so.
      const other = (opts.listOthers?.() ?? []).find((m) => m.id === parsed.model);
      const answers = other?.answers ?? '/v1/chat/completions';
      if (other !== undefined && !(kind === 'chat' && answers === '/v1/chat/completions')) {
        return sendOpenAIError(
          res,
          new OpenAIError(400, `The model \`${parsed.model}\` answers ${answers} only.`, 'model'),
        );
      }
      return sendOpenAIError(
        res,
        new OpenAIError(404, `The model \`${echoName(parsed.model)}\` does not exist.`, 'model', 'model_not_found'),
      );
    }
    whenVocabReady(model, res, () => {
      const vocab = vocabOf(model);
      const withDefaults = withSamplingDefaults(parsed, model.config.samplingDefaults);
      const prompts = readyOrRefused(withDefaults, vocab, res);
      const count = new InferenceCount(opts.inferenceSeries?.(model), arrivalMs);
      if (prompts !== undefined)
        serve(model, { vocab, p: withDefaults, prompts, kind, clientId, count }, arrivalMs, res);
    });
  };
}

/** What rendering an answer needs besides the outputs. */
interface AnswerContext extends RenderContext {
  /** The client's X-Request-Id: the base of the answer's id and of its engine requests' ids. */
  readonly clientId: string | undefined;
  /** Its count in the model's TorchServe series. */
  readonly count: InferenceCount;
}

function serve(model: GenerationTarget, ctx: AnswerContext, arrivalMs: number, res: Response): void {
  const { p, kind, count } = ctx;
  // A stream sends each output's logprobs as they come: only a plain answer keeps them, until its choice is rendered.
  const collector = new ChoiceCollector(
    ctx.prompts.map((r) => r.ids.length),
    p.params.n,
    !p.stream,
  );
  const body = p.stream ? null : new AnswerBody(collector.size);
  const created = Math.floor(Date.now() / 1000);
  const object = kind === 'chat' ? 'chat.completion' : 'text_completion';
  let id = '';
  let ended = false;
  const end = (): void => {
    ended = true;
    count.end();
  };
  const stream = p.stream ? new SseAnswer(res, ctx, created, collector) : null;
  let timing: string | undefined;
  // Exemplars of this request's metrics carry its trace id (noted below for this process; a
  // front's proxy relays it to the primary, which records them): its span's, else the one it sent.
  const span = requestSpanOf(res.req);
  const traceId = exemplarTraceId(res.req, span);
  const traced = generationSpan(span, p, ctx.prompts, arrivalMs);
  const started = generateAll(
    model,
    ctx.prompts,
    p.params,
    arrivalMs,
    {
      // Before the last output: a plain answer sends it as a header, a stream as a trailer.
      onTimings: (t) => {
        timing = generationTiming(t);
        traced?.timings(t);
        count.queued(t.queueMs);
      },
      // Relayed by a front: the stream's 200 waits for the primary's admission, so a refusal (a
      // full queue) is answered with its own status, as it is without fronts.
      onAccepted: () => {
        count.admitted();
        if (!ended && stream !== null && !stream.started) stream.start();
      },
      onOutput: (o: GenRequestOutput, prompt: number) => {
        const c = collector.add(o, prompt);
        if (collector.done) traced?.done(collector);
        if (c === undefined || ended) return;
        if (stream !== null) {
          if (!stream.started) stream.start();
          stream.output(id, o, c, prompt * p.params.n + o.index);
          if (collector.done) {
            if (collector.error) stream.error(500, 'the engine failed while generating');
            else stream.finish(id, timing);
            end();
          }
          return;
        }
        const index = prompt * p.params.n + o.index;
        if (body !== null && c.finishReason !== null && !body.has(index)) {
          body.set(index, choiceBody(ctx, c, index));
          c.logprobs.length = 0; // rendered: the raw entries are not needed any more
        }
        if (!collector.done) return;
        end();
        if (timing !== undefined) res.setHeader('Server-Timing', timing);
        if (collector.error) {
          res.status(500).json(errorBody(500, 'the engine failed while generating'));
          return;
        }
        body?.send(res, { id, object, created, model: p.model }, collector.usage());
      },
      onError: (status, message) => {
        if (ended) return;
        end();
        if (stream !== null && stream.started) stream.error(status, message);
        else res.status(status).json(errorBody(status, message));
      },
    },
    traceId,
    ctx.clientId,
  );
  if ('status' in started) {
    end();
    sendOpenAIError(res, new OpenAIError(started.status, started.message));
    return;
  }
  // vLLM's ids: the client's X-Request-Id (already echoed) when it sent one, else the engine's.
  id = `${kind === 'chat' ? 'chatcmpl' : 'cmpl'}-${ctx.clientId ?? started.requestId}`;
  if (ctx.clientId === undefined) res.setHeader('x-request-id', started.requestId);
  traced?.ids(started.requestId, id);
  traceIds.set(started.requestId, traceId);
  if (!started.pending) {
    count.admitted();
    stream?.start();
  }
  res.on('close', () => {
    if (!ended) {
      end();
      started.abort();
    }
  });
}
