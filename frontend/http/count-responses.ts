/** Counts every HTTP response of a listener in Requests2XX/4XX/5XX (exactly one each). */
import type { RequestHandler } from 'express';

/**
 * Middleware calling `count(status)` exactly once per response sent: on 'finish', or on 'close'
 * when the headers went out but the body never finished — a streamed (SSE) answer the client
 * closed early was still answered, with the status already sent. A connection closed before
 * any header is no response and counts nothing.
 */
export function countResponses(count: (status: number) => void): RequestHandler {
  return (_req, res, next) => {
    let counted = false;
    const countOnce = (): void => {
      if (counted) return;
      counted = true;
      count(res.statusCode);
    };
    res.once('finish', countOnce);
    res.once('close', () => {
      if (res.headersSent) countOnce();
    });
    next();
  };
}
