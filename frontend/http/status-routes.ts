/**
 * The status page's routes on the management port (behind its token auth when that is on):
 * `GET /` and `GET /status` (the page), `GET /status.json` (its data: the sampler's latest
 * snapshot, `?since=EPOCH_S` for only the newer chart points; at most 20 a second across all
 * clients, 429 beyond), `GET /status.js` and `GET /status.css`. A Content-Security-Policy lets
 * the page load nothing but these, and connect nowhere else.
 *
 * `/status.json`, which an open page asks for every second, is served on node's request before
 * express (route-table.ts's fast routes), doing what the management app's chain did (count,
 * HTTP metrics, token, body bound) in its order with its answers: a request express serves
 * leaves node's HTTP code, which the light prediction path shares, on new object maps
 * (docs/benchmarks.md, "express's prototype switch"), and a 1 Hz express request cost the light
 * model 4–9 % of its CPU per request where a 1 Hz fast-route request cost 1 % (`npm run bench:status`).
 */
import type { Router } from 'express';
import type { IncomingMessage, ServerResponse } from 'http';
import type { BodyLimits } from '../models/body-limits.js';
import type { StatusSampler } from '../status/status-sampler.js';
import { renderStatusPage, statusView } from '../status/status-page.js';
import { STATUS_CSS, STATUS_JS } from '../status/status-assets.js';
import { countResponse } from './count-responses.js';
import { sendError } from './errors.js';
import type { HttpMetrics } from './http-metrics.js';
import { UNMATCHED_HANDLER } from './http-metrics.js';
import { closeWithoutReading, readBody } from './read-body.js';
import { refuse, sendThrown } from './route-helpers.js';
import { routeTable } from './route-table.js';
import { bearerMatches, TOKEN_FAILED } from './token-auth.js';

/** What the management app's chain did before its routes, for the fast `/status.json`. */
export interface StatusRouteContext {
  readonly countResponse: (status: number) => void;
  readonly httpMetrics: HttpMetrics;
  readonly limits: BodyLimits;
  /** The management key, when token auth is on. */
  readonly token?: string;
}

/** The data route's path, pattern and HTTP metrics handler (express's route template). */
const STATUS_JSON = '/status.json';
const STATUS_JSON_PATTERN = /^\/status\.json\/?$/i;

/** The page's policy: its own script, style and data only; no frames, forms or base. */
export const STATUS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Most `/status.json` answers a second (a token bucket of this many, refilled continuously). */
export const STATUS_JSON_PER_S = 20;

/** A token bucket: `take()` is false when the rate is exceeded. */
export class RateLimit {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perS: number,
    private readonly nowMs: () => number = Date.now,
  ) {
    this.tokens = perS;
    this.last = nowMs();
  }

  take(): boolean {
    const now = this.nowMs();
    this.tokens = Math.min(this.perS, this.tokens + ((now - this.last) / 1000) * this.perS);
    this.last = now;
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

function headers(res: ServerResponse, type: string): void {
  res.setHeader('content-type', type);
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('content-security-policy', STATUS_CSP);
}

/** `?since=` of a target: undefined when absent, the epoch second, or a 400's message. */
function sinceOf(url: string): number | undefined | { readonly error: string } {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const all = new URLSearchParams(url.slice(q + 1)).getAll('since');
  if (all.length === 0) return undefined;
  if (all.length > 1 || !/^[0-9]{1,12}$/.test(all[0]!))
    return { error: 'parameter since must be a whole number of epoch seconds (at most 12 digits)' };
  return Number(all[0]);
}

/** The routes, reading `sampler`; `ctx` is what the management app's chain did for the fast `/status.json`. */
export function statusRoutes(
  sampler: StatusSampler,
  ctx: StatusRouteContext,
  limit = new RateLimit(STATUS_JSON_PER_S),
): Router {
  const r = routeTable();
  const page = async (_req: unknown, res: ServerResponse): Promise<void> => {
    await sampler.watched();
    headers(res, 'text/html; charset=utf-8');
    res.end(renderStatusPage(sampler.snapshot()));
  };
  r.get('/', page);
  r.get('/status', page);
  const data = (req: IncomingMessage, res: ServerResponse): void => {
    const since = sinceOf(req.url ?? '/');
    if (typeof since === 'object') return sendError(res, 400, since.error);
    if (!limit.take()) {
      res.setHeader('retry-after', '1');
      sendError(res, 429, `/status.json answers at most ${STATUS_JSON_PER_S} requests a second; try again in 1 s`);
      return;
    }
    sampler.watched().then(
      () => {
        const snap = sampler.snapshot(since);
        headers(res, 'application/json; charset=utf-8');
        res.end(JSON.stringify({ ...snap, view: statusView(snap) }));
      },
      (e: unknown) => sendThrown(res, e, sendError),
    );
  };
  r.fast({
    path: STATUS_JSON,
    methods: ['GET', 'HEAD'],
    pattern: STATUS_JSON_PATTERN,
    send: sendError,
    serve: (req, res) => {
      // The management app's chain, in its order: count, HTTP metrics (under `none` until the
      // route is reached, as express recorded a refusal before it), the key, the body's bounds
      // (a GET's body is read and dropped, as the chain's guard did), then the route.
      countResponse(res, ctx.countResponse);
      let handler = UNMATCHED_HANDLER;
      ctx.httpMetrics.track(req, res, () => handler);
      if (ctx.token !== undefined && !bearerMatches(req.headers.authorization, ctx.token)) {
        closeWithoutReading(req, res);
        sendError(res, 401, TOKEN_FAILED);
        return;
      }
      readBody(req, ctx.limits, (failure) => {
        if (failure !== null) return refuse(req, res, failure.status, failure.message, sendError);
        handler = STATUS_JSON;
        // In a body's callback, outside the route table's catch: a throw here would end the process.
        try {
          data(req, res);
        } catch (e) {
          sendThrown(res, e, sendError);
        }
      });
    },
  });
  r.get('/status.js', (_req, res) => {
    headers(res, 'text/javascript; charset=utf-8');
    res.end(STATUS_JS);
  });
  r.get('/status.css', (_req, res) => {
    headers(res, 'text/css; charset=utf-8');
    res.end(STATUS_CSS);
  });
  return r.router;
}
