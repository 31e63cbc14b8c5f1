/**
 * App-level body bounds, mounted before every route: what the headers decide (415 for an
 * encoding we do not take, 413 from Content-Length) for every path, whichever reader its route
 * uses; with `discard`, for apps whose routes take no body (management), the body is also read
 * and dropped under every limit (413 from the bytes, 408), so no route leaves a body unbounded.
 */
import type { RequestHandler } from 'express';
import type { BodyLimits } from './body-limits.js';
import { refuseBody } from './json-body.js';
import type { BodyErrorSender } from './json-body.js';
import { checkBodyHeaders, readBody } from './read-body.js';

/** Middleware refusing bodies past `limits` (and, with `discard`, reading and dropping them). */
export function bodyGuard(
  limits: BodyLimits,
  opts: {
    readonly discard?: boolean;
    /** The error shape of the route a path belongs to (OIP's `{error}`, OpenAI's); default TorchServe's. */
    readonly senderFor?: (path: string) => BodyErrorSender | undefined;
  } = {},
): RequestHandler {
  return (req, res, next) => {
    const send = opts.senderFor?.(req.path);
    if (opts.discard === true) {
      readBody(req, limits, (failure) => (failure !== null ? refuseBody(req, res, failure, send) : next()));
      return;
    }
    const failure = checkBodyHeaders(req, limits);
    if (failure !== null) return refuseBody(req, res, failure, send);
    next();
  };
}
