/**
 * App-level body bounds, mounted before every route: what the headers decide (415 for an
 * encoding we do not take, 413 from Content-Length) for every path, whichever reader its route
 * uses; with `discard`, for apps whose routes take no body (management), the body is also read
 * under every limit (413 from the bytes, 408), so no route leaves a body unbounded; a route that
 * wants it after all (`POST /models` with JSON) finds it with `guardedBody`.
 */
import type { RequestHandler } from 'express';
import type { BodyLimits } from '../models/body-limits.js';
import { refuseBody } from './json-body.js';
import type { BodyErrorSender } from './json-body.js';
import { checkBodyHeaders, readBody } from './read-body.js';

/** The bodies a `discard` guard read, by request (gone with the request). */
const readBodies = new WeakMap<object, Buffer>();

/** The body a `discard` guard read for `req` (within every limit), or undefined when it had none. */
export function guardedBody(req: object): Buffer | undefined {
  return readBodies.get(req);
}

/** Middleware refusing bodies past `limits` (and, with `discard`, reading them for `guardedBody`). */
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
      readBody(req, limits, (failure, body) => {
        if (failure !== null) return refuseBody(req, res, failure, send);
        // Kept for the one management route that reads it (a JSON registration, TorchServe's).
        if (body.length > 0) readBodies.set(req, body);
        next();
      });
      return;
    }
    const failure = checkBodyHeaders(req, limits);
    if (failure !== null) return refuseBody(req, res, failure, send);
    next();
  };
}
