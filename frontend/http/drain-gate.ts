/**
 * The drain's gate in front of a listener: once the server stops, the requests a listener refuses
 * get 503 with Retry-After and `Connection: close`, counted like any other answer.
 */
import type * as http from 'http';
import { sendError } from './errors.js';
import type { HttpMetrics } from './http-metrics.js';
import { UNMATCHED_HANDLER } from './http-metrics.js';

/** Seconds a client is told to wait (Retry-After) when it reaches a draining server. */
export const DRAIN_RETRY_AFTER_SEC = 5;

/** The 503 answer's message while draining. */
export const DRAIN_MESSAGE =
  'The server is shutting down and accepts no new requests; retry later (or on another instance).';

type Listener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * `app` until the drain starts; from then on, the requests `refused` picks are answered 503
 * with Retry-After and `Connection: close` (a keep-alive client reconnects, through its load
 * balancer, to an instance that is not leaving) and counted like any other answer.
 */
export function drainGate(
  app: Listener,
  draining: () => boolean,
  refused: (req: http.IncomingMessage) => boolean,
  count: (status: number) => void,
  http?: HttpMetrics,
  /** Writes the 503 in the shape of the request's API (default TorchServe's). */
  send: (req: http.IncomingMessage, res: http.ServerResponse, status: number, message: string) => void = (
    _req,
    res,
    s,
    m,
  ) => sendError(res, s, m),
): Listener {
  return (req, res) => {
    if (!draining() || !refused(req)) {
      app(req, res);
      return;
    }
    count(503);
    // In the HTTP families too (no route matched yet: handler "none"), or an error-ratio alert on
    // http_requests_total would miss every drain.
    http?.track(req, res, () => UNMATCHED_HANDLER);
    res.setHeader('retry-after', String(DRAIN_RETRY_AFTER_SEC));
    res.setHeader('connection', 'close');
    send(req, res, 503, DRAIN_MESSAGE);
  };
}
