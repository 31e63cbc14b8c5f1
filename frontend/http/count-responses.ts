/** Counts every HTTP response of a listener in Requests2XX/4XX/5XX (exactly one each). */
import type { ServerResponse } from 'http';
import type { RequestHandler } from 'express';
import { onResponseEnd } from './response-end.js';

/** Calls `count(status)` once for `res`: on 'finish', or on 'close' after its headers went out. */
export function countResponse(res: ServerResponse, count: (status: number) => void): void {
  onResponseEnd(res, (finished) => {
    if (finished || res.headersSent) count(res.statusCode);
  });
}

/**
 * Middleware calling `count(status)` exactly once per response sent: on 'finish', or on 'close'
 * when the headers went out but the body never finished — a streamed (SSE) answer the client
 * closed early was still answered, with the status already sent. A connection closed before
 * any header is no response and counts nothing.
 */
export function countResponses(count: (status: number) => void): RequestHandler {
  return (_req, res, next) => {
    countResponse(res, count);
    next();
  };
}
