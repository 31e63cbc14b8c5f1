/**
 * Inference API (TorchServe paths): `GET /ping`, `POST /predictions/{model}[/{version}]`
 * (predictions-route.ts) and the Open Inference Protocol's `POST .../infer` (oip/infer-route.ts),
 * both on node's request before express, the rest of the Open Inference Protocol and any
 * extra routers (OpenAI's `/v1/*`): one route table (route-table.ts) mounts them all.
 */
import { describeRoutes } from './openapi/openapi-routes.js';
import express from 'express';
import type { Router } from 'express';
import type { IncomingMessage, ServerResponse } from 'http';
import type { FrontendSeries } from '../models/frontend-series.js';
import type { ServedModel } from '../models/served-model.js';
import type { AllowedMethods } from './allowed-methods.js';
import { answerWrongMethods } from './allowed-methods.js';
import type { BodyLimits } from '../models/body-limits.js';
import { bodyLimits } from '../models/body-limits.js';
import { bodyGuard } from './body-guard.js';
import { countResponses } from './count-responses.js';
import { errorHandler, notFound, sendError, sendJson } from './errors.js';
import { healthRoutes } from './health-routes.js';
import type { HealthReport } from '../models/health.js';
import { HttpMetrics, UNMATCHED_HANDLER } from './http-metrics.js';
import { guardTarget } from './request-target.js';
import { oipInferRoute } from './oip/infer-route.js';
import { sendOipError } from './oip/oip-error.js';
import { oipRouter } from './oip/oip-router.js';
import { errorBody, OpenAIError, sendOpenAIError } from './openai-errors.js';
import type { BodyErrorSender } from './json-body.js';
import { predictionsRoute } from './predictions-route.js';
import { routeTable } from './route-table.js';
import { requireToken } from './token-auth.js';

/** What the inference app needs. */
export interface InferenceAppOptions {
  /** This port's OpenAPI document: served at /openapi.json, /docs and OPTIONS / when given. */
  readonly description?: Record<string, unknown>;
  readonly lookup: (name: string) => ServedModel | undefined;
  /** Every registered model (the Open Inference Protocol's server readiness); none when absent. */
  readonly list?: () => readonly ServedModel[];
  readonly series: FrontendSeries;
  readonly maxRequestSizeBytes: number;
  /** JSON depth and element bounds and the body timeouts (defaults: DEFAULT_BODY_LIMITS); maxBytes is maxRequestSizeBytes. */
  readonly bodyLimits?: Partial<BodyLimits>;
  /** Bearer key required on every path but OPEN_PATHS, when token auth is on. */
  readonly token?: string;
  /** Extra routers, built by `routeTable()` (e.g. OpenAI `/v1/*` from a generation model kind). */
  readonly extraRoutes?: readonly Router[];
  /** What `/ping` and `/health` report (default: always healthy). */
  readonly health?: () => HealthReport;
}

/**
 * The paths open with token auth on: the server's probes, TorchServe's, vLLM's and the Open
 * Inference Protocol's liveness and readiness. A Kubernetes probe sends no token (the shipped
 * deployment probes /v2/health/*), and they tell nothing about any model.
 */
export const OPEN_PATHS: readonly string[] = ['/ping', '/health', '/v2/health/live', '/v2/health/ready'];

/** The inference listener, and the methods each of its paths takes (what its 405s say in `Allow`). */
export type InferenceListener = ((req: IncomingMessage, res: ServerResponse) => void) & {
  readonly allowed: AllowedMethods;
};

/** Builds the inference listener: the predictions route, then the express app for every other request. */
export function inferenceApp(opts: InferenceAppOptions): InferenceListener {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(countResponses((s) => opts.series.countResponse(s)));
  const httpMetrics = new HttpMetrics((n, d) => opts.series.bind(n, d));
  app.use(httpMetrics.middleware());
  if (opts.token !== undefined) app.use(requireToken(opts.token, OPEN_PATHS));
  const limits = bodyLimits({ ...opts.bodyLimits, maxBytes: opts.maxRequestSizeBytes });
  app.use(bodyGuard(limits, { senderFor: errorShapeOf }));
  const routeOpts = {
    lookup: opts.lookup,
    series: opts.series,
    httpMetrics,
    limits,
    ...(opts.token !== undefined ? { token: opts.token } : {}),
  };
  // Every route of the listener in one table: the express routers, then the two fast routes
  // that it serves on node's request before express (predictions-route.ts says why).
  const routes = routeTable()
    .mount(healthRoutes(opts.health ?? (() => ({ ping: 'Healthy', serving: true }))))
    .mount(oipRouter({ lookup: opts.lookup, ...(opts.list !== undefined ? { list: opts.list } : {}) }));
  for (const r of opts.extraRoutes ?? []) routes.mount(r);
  if (opts.description !== undefined) describeRoutes(routes, opts.description);
  routes.fast(predictionsRoute(routeOpts)).fast(oipInferRoute(routeOpts));
  app.use(routes.router);
  // A path that exists with a method it does not take is a 405 naming the methods it takes (as
  // the management API and TorchServe answer it), not a 404 saying the path does not exist.
  const allowed = answerWrongMethods(app, routes.allowed(), (req, res, allow) => {
    const send = errorShapeOf(req.path);
    if (send === undefined) sendError(res, 405, 'Requested method is not allowed, please refer to API document.');
    else send(res, 405, `Method ${req.method} is not allowed on ${req.path}; it takes ${allow}`);
  });
  // An unknown path under /v1 or /v2 answers in its API's error shape, so its clients can read it.
  app.use((req, res, next) => {
    const send = errorShapeOf(req.path);
    if (send === undefined) notFound(req, res, next);
    else send(res, 404, `Invalid URL (${req.method} ${req.path})`);
  });
  app.use(errorHandler);
  const count = (s: number): void => opts.series.countResponse(s);
  const listener = guardTarget(routes.listener(app), count, (req, res) =>
    httpMetrics.track(req, res, () => UNMATCHED_HANDLER),
  );
  return Object.assign(listener, { allowed });
}

/** Each API family answers a refused body in its own error shape. */
const sendOpenAIBodyError: BodyErrorSender = (res, status, message) =>
  sendOpenAIError(res, new OpenAIError(status, message));

/**
 * An error in the shape of the API the request's path belongs to (OpenAI's under /v1, the Open
 * Inference Protocol's under /v2, TorchServe's elsewhere), on node's response: for answers given
 * before express (the drain's 503), so an OpenAI or KServe client can read them too.
 */
export function sendInferenceError(req: IncomingMessage, res: ServerResponse, status: number, message: string): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (path.startsWith('/v2/')) sendOipError(res, status, message);
  else if (path.startsWith('/v1/')) sendJson(res, status, errorBody(status, message));
  else sendError(res, status, message);
}

function errorShapeOf(path: string): BodyErrorSender | undefined {
  if (path.startsWith('/v2/')) return sendOipError;
  if (path.startsWith('/v1/')) return sendOpenAIBodyError;
  return undefined;
}
