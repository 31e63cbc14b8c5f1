/**
 * What the routes served outside express (predictions-route.ts, oip/infer-route.ts) share with
 * each other: their options, reading a target's path as express would, decoding a path
 * parameter as express does, what the express chain did before the route's own work (counting,
 * HTTP metrics, token, body headers, parameters), the per-version series of a model, and the
 * 500 that express's error handler gave a route that threw.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import type { FrontendSeries, ModelSeries } from '../models/frontend-series.js';
import type { ServedModel } from '../models/served-model.js';
import type { BodyLimits } from '../models/body-limits.js';
import { countResponse } from './count-responses.js';
import { sendError } from './errors.js';
import type { HttpMetrics } from './http-metrics.js';
import { UNMATCHED_HANDLER } from './http-metrics.js';
import { checkBodyHeaders, closeIfUnread, closeWithoutReading } from './read-body.js';
import { bearerMatches, TOKEN_FAILED } from './token-auth.js';

/** What a route outside express needs. */
export interface RouteOptions {
  readonly lookup: (name: string) => ServedModel | undefined;
  readonly series: FrontendSeries;
  readonly httpMetrics: HttpMetrics;
  readonly limits: BodyLimits;
  /** Bearer key required when token auth is on. */
  readonly token?: string;
}

/** An error answer in a route's shape (TorchServe's `{code, type, message}`, OIP's `{error}`). */
export type ErrorSender = (res: ServerResponse, status: number, message: string) => void;

/** Answers `status` in the route's shape; the unread rest of the body never becomes the next request. */
export function refuse(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  message: string,
  send: ErrorSender,
): void {
  closeIfUnread(req, res, status);
  send(res, status, message);
}

/**
 * What the express chain did before a route's handler, in its order: count the response, track
 * its HTTP metrics (under `handler="none"` until the parameters decoded, then under
 * `template`), check the bearer token (TorchServe's 401 on every route, as the middleware
 * answered), the body headers (415, 413 from Content-Length) and decode the path parameters
 * (`m[1]`, optional `m[2]`; 400 when malformed). The model's name and version, or null after
 * answering.
 */
export function routeStart(
  req: IncomingMessage,
  res: ServerResponse,
  m: RegExpExecArray,
  opts: RouteOptions,
  template: string,
  send: ErrorSender,
): { readonly name: string; readonly version: string | undefined } | null {
  countResponse(res, (s) => opts.series.countResponse(s));
  let handler = UNMATCHED_HANDLER;
  opts.httpMetrics.track(req, res, () => handler);
  if (opts.token !== undefined && !bearerMatches(req.headers.authorization, opts.token)) {
    // Not drained like other refusals: a client without the key gets none of its body read.
    closeWithoutReading(req, res);
    sendError(res, 401, TOKEN_FAILED);
    return null;
  }
  const early = checkBodyHeaders(req, opts.limits);
  if (early !== null) {
    refuse(req, res, early.status, early.message, send);
    return null;
  }
  const name = decodeParam(m[1] as string);
  const version = m[2] === undefined ? undefined : decodeParam(m[2]);
  if (name === null || version === null) {
    refuse(req, res, 400, `Failed to decode param '${name === null ? m[1] : m[2]}'`, send);
    return null;
  }
  handler = template;
  return { name, version };
}

/** The `model_version` label of a request that names no version (TorchServe's). */
const UNNAMED_VERSION_LABEL = 'default';

/**
 * A model's series for a request: `model_version` is the version the request named, `default`
 * when it named none (TorchServe's). Bound once per model and kind of request.
 */
/**
 * Where a model that takes no /predictions or /v2 infer is served, as a refusal's tail: a
 * generation model or a spoken pipeline answers on OpenAI's routes, though its /v2 metadata and
 * the management API describe it as any model; '' for another kind.
 */
export function servedElsewhere(model: ServedModel): string {
  return model.kind === 'generate' || model.openaiListing !== undefined
    ? "; it answers on OpenAI's /v1 routes (GET /v1/models lists it)"
    : '';
}

export function seriesByVersion(
  series: FrontendSeries,
): (model: ServedModel, version: string | undefined) => ModelSeries {
  const cache = new WeakMap<ServedModel, { unnamed?: ModelSeries; named?: ModelSeries }>();
  return (model, version) => {
    let bound = cache.get(model);
    if (bound === undefined) cache.set(model, (bound = {}));
    return version === undefined
      ? (bound.unnamed ??= series.forModel(model.config.name, UNNAMED_VERSION_LABEL))
      : (bound.named ??= series.forModel(model.config.name, version));
  };
}

/**
 * The path of a request target: origin-form (`/predictions/mlp?x=1`) without its query, or the
 * path of an absolute-form one (`http://host/predictions/mlp`), which HTTP/1.1 servers must take.
 */
export function pathOf(url: string): string {
  if (url.charCodeAt(0) !== 47 /* / */) {
    try {
      return new URL(url).pathname;
    } catch {
      return '';
    }
  }
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** A path segment decoded as express decodes a route parameter; null when it is malformed. */
export function decodeParam(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/**
 * Runs `fn`, answering 500 with the error's message (in the route's error shape, `send`) if it
 * throws, as express's error handler did: outside express nothing else would catch it, and a
 * throw in a request listener or a body callback ends the process.
 */
export function guarded(res: ServerResponse, fn: () => void, send: ErrorSender = sendError): void {
  try {
    fn();
  } catch (e) {
    sendThrown(res, e, send);
  }
}

/** The 500 of a route that threw `e`: its message, in the route's error shape. */
export function sendThrown(res: ServerResponse, e: unknown, send: ErrorSender): void {
  send(res, 500, e instanceof Error ? e.message : String(e));
}
