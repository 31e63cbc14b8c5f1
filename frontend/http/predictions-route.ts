/**
 * `POST /predictions/{model}[/{version}]` (or `PUT`, TorchServe's `curl -T`) on node's request and response, outside express:
 * express's router and its request/response decoration cost about 45 µs a request on this
 * route (a measured bare node server answered 28,000 such requests a second on one core, the
 * same behind express with four pass-through middlewares and a router 12,500), more than the
 * body's decoding and the batching together. What the express chain did for the route is done
 * here in the same order, with the same answers: response counting (Requests2XX…), the HTTP
 * metrics under the route template `/predictions/{model}[/{version}]`, the bearer token, the
 * body bounds and decoding, then the prediction. Every other request goes to express.
 *
 * Each prediction gets a request id (answered in `x-request-id`, carried to the worker and
 * into model metrics), counts in `ts_inference_requests_total` at admission, and adds its
 * total and queue time (µs) to the two `ts_*_microseconds` counters when answered. A model has
 * one version (model-config `version:`, default 1.0): `/predictions/{model}/{version}` must name
 * it (else 404), and the `model_version` label is the version the request named, or `default`.
 */
import { randomUUID } from 'crypto';
import type { IncomingMessage, ServerResponse } from 'http';
import { performance } from 'perf_hooks';
import { traceIds } from '../metrics/exposition/trace-ids.js';
import { exemplarTraceId, requestSpanOf, startRequestSpan, tracingOn } from '../tracing/request-span.js';
import { sendError } from './errors.js';
import { routeTemplate } from './http-metrics.js';
import { readPredictionBody } from './prediction-body.js';
import { readImageBody } from './image-body.js';
import type { PredictionBody } from './prediction-body.js';
import { predictionTiming } from './server-timing.js';
import { onResponseEnd } from './response-end.js';
import { msAsUs } from '../../schema/elapsed.js';
import type { JobOutcome } from '../batching/job.js';
import { guarded, refuse, routeStart, servedElsewhere, seriesByVersion } from './route-helpers.js';
import type { RouteOptions } from './route-helpers.js';
import type { OutsideRoute } from './allowed-methods.js';
import type { FastRoute } from './route-table.js';
import { settledTensorSpec, tensorSpecFor } from './oip/io-cache.js';
import { tensorAnswerText } from './tensor-json.js';
import type { TensorSpec } from './tensor-spec.js';
import { isTensorAnswer } from '../../schema/tensors.js';

/** The route, as express wrote it (case-insensitive, an optional trailing slash, any query). */
const ROUTE = /^\/predictions\/([^/]+)(?:\/([^/]+))?\/?$/i;

/** The route's path as express writes it, and its methods (PUT as POST: TorchServe's docs predict with `curl -T file`, which PUTs). */
export const PREDICTIONS_ROUTE: OutsideRoute = { path: '/predictions/:model{/:version}', methods: ['POST', 'PUT'] };

/** The `handler` label of the route's HTTP metrics (the instrumentator's template). */
export const PREDICTIONS_HANDLER = routeTemplate(PREDICTIONS_ROUTE.path);

const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A handler's answer as JSON text. What crossed from the worker may not be JSON (a BigInt, a
 * cycle: the IPC channel carries both): that request gets a 500 naming why, and the server
 * keeps serving (it used to throw here, outside any handler, and end the process). A request
 * the handler answered with `undefined` gets an empty body, as before.
 */
function answerText(body: unknown): string | { readonly error: string } {
  if (isTensorAnswer(body)) return tensorAnswerText(body);
  try {
    return JSON.stringify(body) ?? '';
  } catch (e) {
    return { error: `the handler's answer cannot be sent as JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** The route, for the inference listener's route table (which matches its method and path, and answers a throw 500). */
export function predictionsRoute(opts: RouteOptions): FastRoute {
  const predict = predictor(opts);
  return { ...PREDICTIONS_ROUTE, pattern: ROUTE, send: sendError, serve: route };

  function route(req: IncomingMessage, res: ServerResponse, m: RegExpExecArray): void {
    const start = routeStart(req, res, m, opts, PREDICTIONS_HANDLER, sendError);
    if (start === null) return;
    const { name, version } = start;
    if (tracingOn())
      startRequestSpan(req, res, PREDICTIONS_HANDLER, performance.now(), { 'gen_ai.request.model': name });
    // What the model decides (404, a model that takes no /predictions) before the body is read:
    // a body to a model that does not exist is never judged by another model's rules (415, 400).
    const model = opts.lookup(name);
    if (model === undefined) return refuse(req, res, 404, `Model not found: ${name}`, sendError);
    if (version !== undefined && version !== model.config.version)
      return refuse(req, res, 404, `Model version ${version} not found for model ${name}`, sendError);
    if (model.submit === undefined)
      return refuse(
        req,
        res,
        400,
        `model ${name} does not serve /predictions (kind ${model.kind})${servedElsewhere(model)}`,
        sendError,
      );
    const read = (spec: TensorSpec | null): void =>
      readPredictionBody(req, res, opts.limits, name, spec, (body) =>
        guarded(res, () => predict(req, res, name, version, body)),
      );
    // An image model's body is an image, decoded in this process (frontend/image/image-decoder.ts).
    if (model.imageDecoder !== undefined)
      return readImageBody(req, res, opts.limits, model.imageDecoder, (body) =>
        guarded(res, () => predict(req, res, name, version, body)),
      );
    // A built-in onnx model's body is checked against its graph's inputs (read once per model).
    if (model.config.handler !== 'onnx') return read(null);
    const known = settledTensorSpec(model);
    if (known !== undefined) return read(known); // a throw is the route table's 500, in the same shape
    void tensorSpecFor(model).then((spec) => guarded(res, () => read(spec)));
  }
}

function predictor(
  opts: RouteOptions,
): (
  req: IncomingMessage,
  res: ServerResponse,
  name: string,
  version: string | undefined,
  body: PredictionBody,
) => void {
  const seriesOf = seriesByVersion(opts.series);
  return (req, res, name, version, body) => {
    const arrivalMs = performance.now();
    const requestId = randomUUID();
    res.setHeader('x-request-id', requestId);
    // Exemplars of this request's metrics carry its trace id: its span's, else the one it sent.
    const span = requestSpanOf(req);
    traceIds.set(requestId, exemplarTraceId(req, span));
    span?.set({ 'gen_ai.request.id': requestId });
    const model = opts.lookup(name);
    if (model === undefined) return sendError(res, 404, `Model not found: ${name}`);
    if (version !== undefined && version !== model.config.version) {
      return sendError(res, 404, `Model version ${version} not found for model ${name}`);
    }
    if (model.submit === undefined)
      return sendError(res, 400, `model ${name} does not serve /predictions (kind ${model.kind})`);
    const tensors = body.tensors;
    if (body.value === undefined && tensors === undefined) {
      return sendError(res, 400, 'missing request body: send the model input as JSON');
    }
    const s = seriesOf(model, version);
    // A front's proxy: the primary admits the job, and says so with its outcome.
    const relayed = model.admitsRemotely === true;
    // 'close' before the response finished = the client went away (req's own 'close' fires
    // as soon as its body is read, so it cannot tell).
    let gone = false;
    onResponseEnd(res, (finished) => {
      if (!finished && !res.writableFinished) gone = true;
    });
    const admitted = model.submit({
      requestId,
      body: body.value,
      ...(tensors !== undefined ? tensors : {}),
      arrivalMs,
      cancelled: () => gone,
      done: (outcome) => {
        if (outcome.refused !== undefined) {
          if (!res.headersSent && !res.destroyed) refusal(res, name, outcome.refused);
          return;
        }
        if (relayed) s.requests.record(1);
        const doneMs = performance.now();
        span?.batched(arrivalMs, outcome.queueUs, outcome.handlerUs, doneMs);
        const totalUs = msAsUs(doneMs - arrivalMs);
        s.latencyUs.record(totalUs);
        s.queueUs.record(outcome.queueUs);
        if (res.headersSent || res.destroyed) return;
        res.setHeader('server-timing', predictionTiming(outcome.queueUs, outcome.handlerUs, totalUs));
        const text = answerText(outcome.body);
        if (typeof text !== 'string') return sendError(res, 500, text.error);
        // A Content-Length rather than chunked framing: the answer is whole at this point.
        res.writeHead(outcome.status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(text) });
        res.end(text);
      },
    });
    // No requestID on frontend lines (TorchServe's ts_metrics.log format).
    if (admitted === 'queued') {
      if (!relayed) s.requests.record(1);
      return;
    }
    refusal(res, name, admitted);
  };
}

/** The 503 of a job its model did not admit (here, or at the primary for a front). */
function refusal(res: ServerResponse, name: string, why: NonNullable<JobOutcome['refused']>): void {
  switch (why) {
    case 'queue_full':
      return sendError(
        res,
        503,
        `Model "${name}" has no worker to serve inference request. Please use scale workers API to add workers. (job queue full)`,
      );
    case 'unavailable':
      return sendError(
        res,
        503,
        `Model "${name}" has no worker to serve inference request. Please use scale workers API to add workers.`,
      );
    case 'closed':
      return sendError(res, 503, `Model "${name}" is being unregistered`);
  }
}
