/**
 * The status page's routes on the management port (behind its token auth when that is on):
 * `GET /` and `GET /status` (the page), `GET /status.json` (its data: the sampler's latest
 * snapshot, `?since=EPOCH_S` for only the newer chart points; at most 20 a second across all
 * clients, 429 beyond), `GET /status.js` and `GET /status.css`. A Content-Security-Policy lets
 * the page load nothing but these, and connect nowhere else.
 */
import type { Router } from 'express';
import type { Response } from 'express';
import type { StatusSampler } from '../status/status-sampler.js';
import { renderStatusPage, statusView } from '../status/status-page.js';
import { STATUS_CSS, STATUS_JS } from '../status/status-assets.js';
import { sendError } from './errors.js';
import { routeTable } from './route-table.js';

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

function headers(res: Response, type: string): void {
  res.setHeader('content-type', type);
  res.setHeader('cache-control', 'no-store');
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('content-security-policy', STATUS_CSP);
}

/** The routes, reading `sampler`. */
export function statusRoutes(sampler: StatusSampler, limit = new RateLimit(STATUS_JSON_PER_S)): Router {
  const r = routeTable();
  const page = async (_req: unknown, res: Response): Promise<void> => {
    await sampler.watched();
    headers(res, 'text/html; charset=utf-8');
    res.end(renderStatusPage(sampler.snapshot()));
  };
  r.get('/', page);
  r.get('/status', page);
  r.get('/status.json', async (req, res) => {
    const raw = req.query.since;
    let since: number | undefined;
    if (raw !== undefined) {
      if (typeof raw !== 'string' || !/^[0-9]{1,12}$/.test(raw)) {
        sendError(res, 400, 'parameter since must be a whole number of epoch seconds (at most 12 digits)');
        return;
      }
      since = Number(raw);
    }
    if (!limit.take()) {
      res.setHeader('retry-after', '1');
      sendError(res, 429, `/status.json answers at most ${STATUS_JSON_PER_S} requests a second; try again in 1 s`);
      return;
    }
    await sampler.watched();
    const snap = sampler.snapshot(since);
    headers(res, 'application/json; charset=utf-8');
    res.end(JSON.stringify({ ...snap, view: statusView(snap) }));
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
