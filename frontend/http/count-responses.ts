/** Counts every HTTP response of a listener in Requests2XX/4XX/5XX (exactly one each). */
import type { RequestHandler } from 'express';

/** Middleware calling `count(status)` once per response actually sent. */
export function countResponses(count: (status: number) => void): RequestHandler {
  return (_req, res, next) => {
    res.once('finish', () => count(res.statusCode));
    next();
  };
}
