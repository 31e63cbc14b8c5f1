/**
 * Inference API (TorchServe paths): `GET /ping`, `POST /predictions/{model}[/{version}]`.
 * Each prediction gets a request id (answered in `x-request-id`, carried to the worker and
 * into model metrics), counts in `ts_inference_requests_total` at admission, and adds its
 * total and queue time (µs) to the two `ts_*_microseconds` counters when answered. A model has
 * one version (model-config `version:`, default 1.0): `/predictions/{model}/{version}` must name
 * it (else 404), and the `model_version` label is the version the request named, or `default`.
 */
import { randomUUID } from 'crypto';
import { performance } from 'perf_hooks';
import express from 'express';
import type { Express, RequestHandler, Router } from 'express';
import { parseTraceparent, traceIds } from '../metrics/exposition/trace-ids.js';
import type { FrontendSeries, ModelSeries } from '../server/frontend-series.js';
import type { ServedModel } from '../server/served-model.js';
import type { BodyLimits } from './body-limits.js';
import { bodyLimits } from './body-limits.js';
import { bodyGuard } from './body-guard.js';
import { countResponses } from './count-responses.js';
import { errorHandler, notFound, sendError } from './errors.js';
import { healthRoutes } from './health-routes.js';
import type { HealthReport } from '../server/health.js';
import { HttpMetrics } from './http-metrics.js';
import { oipRouter, sendOipError } from './oip/oip-router.js';
import { OpenAIError, sendOpenAIError } from '../openai/errors.js';
import type { BodyErrorSender } from './json-body.js';
import { predictionTiming } from './server-timing.js';
import { predictionBody, tensorOf } from './prediction-body.js';
import { requireToken } from './token-auth.js';
import { msAsUs } from '../../schema/elapsed.js';

/** What the inference app needs. */
export interface InferenceAppOptions {
  readonly lookup: (name: string) => ServedModel | undefined;
  /** Every registered model (the Open Inference Protocol's server readiness); none when absent. */
  readonly list?: () => readonly ServedModel[];
  readonly series: FrontendSeries;
  readonly maxRequestSizeBytes: number;
  /** JSON depth and element bounds and the body timeouts (defaults: DEFAULT_BODY_LIMITS); maxBytes is maxRequestSizeBytes. */
  readonly bodyLimits?: Partial<BodyLimits>;
  /** Bearer key required on every path but /ping, when token auth is on. */
  readonly token?: string;
  /** Extra routers (e.g. OpenAI `/v1/*` from a generation model kind). */
  readonly extraRoutes?: readonly Router[];
  /** What `/ping` and `/health` report (default: always healthy). */
  readonly health?: () => HealthReport;
}

/** Builds the inference express app. */
export function inferenceApp(opts: InferenceAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(countResponses((s) => opts.series.countResponse(s)));
  app.use(new HttpMetrics((n, d) => opts.series.bind(n, d)).middleware());
  if (opts.token !== undefined) app.use(requireToken(opts.token, ['/ping', '/health']));
  const limits = bodyLimits({ ...opts.bodyLimits, maxBytes: opts.maxRequestSizeBytes });
  app.use(bodyGuard(limits, { senderFor: errorShapeOf }));
  app.use(healthRoutes(opts.health ?? (() => ({ ping: 'Healthy', serving: true }))));
  // Every body is JSON whatever its content type (curl -d sends form-urlencoded by default),
  // except application/octet-stream: a binary float32 tensor.
  const takesTensors = (name: string): boolean => opts.lookup(name)?.config.handler === 'onnx';
  app.post('/predictions/:model{/:version}', predictionBody({ limits, takesTensors }), predict(opts));
  app.use(oipRouter({ lookup: opts.lookup, list: opts.list, series: opts.series, maxRequestSizeBytes: opts.maxRequestSizeBytes }));
  for (const r of opts.extraRoutes ?? []) app.use(r);
  app.use(notFound);
  app.use(errorHandler);
  return app;
}

/** Each API family answers a refused body in its own error shape. */
const sendOpenAIBodyError: BodyErrorSender = (res, status, message) => sendOpenAIError(res, new OpenAIError(status, message));
function errorShapeOf(path: string): BodyErrorSender | undefined {
  if (path.startsWith('/v2/')) return sendOipError;
  if (path.startsWith('/v1/')) return sendOpenAIBodyError;
  return undefined;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' } as const;

/** The `model_version` label of a request that names no version (TorchServe's). */
const UNNAMED_VERSION_LABEL = 'default';

function predict(opts: InferenceAppOptions): RequestHandler {
  // Per model: the series of requests that named no version, and of those that named it.
  const seriesCache = new WeakMap<ServedModel, { unnamed?: ModelSeries; named?: ModelSeries }>();
  return (req, res) => {
    const arrivalMs = performance.now();
    const requestId = randomUUID();
    res.set('x-request-id', requestId);
    // Exemplars of this request's metrics carry its W3C trace id, when it sent one.
    traceIds.set(requestId, parseTraceparent(req.headers.traceparent));
    const name = String(req.params.model);
    const model = opts.lookup(name);
    if (model === undefined) return sendError(res, 404, `Model not found: ${name}`);
    const version = req.params.version === undefined ? undefined : String(req.params.version);
    if (version !== undefined && version !== model.config.version) {
      return sendError(res, 404, `Model version ${version} not found for model ${name}`);
    }
    if (model.submit === undefined) return sendError(res, 400, `model ${name} does not serve /predictions (kind ${model.kind})`);
    const input = tensorOf(req);
    if (req.body === undefined && input === undefined) {
      return sendError(res, 400, 'missing request body: send the model input as JSON');
    }
    let bound = seriesCache.get(model);
    if (bound === undefined) {
      bound = {};
      seriesCache.set(model, bound);
    }
    // model_version is the version the request named, `default` when it named none (TorchServe).
    const s = version === undefined
      ? (bound.unnamed ??= opts.series.forModel(model.config.name, UNNAMED_VERSION_LABEL))
      : (bound.named ??= opts.series.forModel(model.config.name, version));
    // 'close' before the response finished = the client went away (req's own 'close' fires
    // as soon as its body is read, so it cannot tell).
    let gone = false;
    res.once('close', () => { if (!res.writableFinished) gone = true; });
    const admitted = model.submit({
      requestId, body: req.body as unknown, input, arrivalMs,
      cancelled: () => gone,
      done: (outcome) => {
        const totalUs = msAsUs(performance.now() - arrivalMs);
        s.latencyUs.record(totalUs);
        s.queueUs.record(outcome.queueUs);
        // Straight to node's response (express's send machinery costs more than the JSON).
        if (res.headersSent || res.destroyed) return;
        res.setHeader('server-timing', predictionTiming(outcome.queueUs, outcome.handlerUs, totalUs));
        res.writeHead(outcome.status, JSON_HEADERS);
        res.end(JSON.stringify(outcome.body));
      },
    });
    switch (admitted) {
      case 'queued': s.requests.record(1); return; // no requestID on frontend lines (TorchServe's ts_metrics.log format)
      case 'queue_full': return sendError(res, 503, `Model "${name}" has no worker to serve inference request. Please use scale workers API to add workers. (job queue full)`);
      case 'unavailable': return sendError(res, 503, `Model "${name}" has no worker to serve inference request. Please use scale workers API to add workers.`);
      case 'closed': return sendError(res, 503, `Model "${name}" is being unregistered`);
    }
  };
}
