/**
 * Metrics API: `GET /metrics[?name[]=A&name[]=B]` → the Prometheus exposition, OpenMetrics 1.0
 * when the `Accept` header asks for it, else the text format 0.0.4. No auth, and scrapes are
 * not counted in Requests2XX (so a scraper does not inflate the request counts).
 */
import express from 'express';
import type { Express, Request, Response } from 'express';
import type { AllowedMethods } from './allowed-methods.js';
import { answerWrongMethods } from './allowed-methods.js';
import { routeTable } from './route-table.js';
import { describeRoutes } from './openapi/openapi-routes.js';
import type { MetricsPort } from '../models/metrics-port.js';
import { contentType, negotiate } from '../metrics/exposition/negotiate.js';
import { errorHandler, notFound, sendError } from './errors.js';
import { HttpMetrics, handlerOf } from './http-metrics.js';
import { bindOrNoop } from '../metrics/bind-or-noop.js';

/** What `?name[]=` asks for: every family (undefined), those names, or a 400's message. */
export type NamesFilter = { readonly names: readonly string[] | undefined } | { readonly error: string };

/**
 * The `name[]` (or `name`) filter of a metrics URL, as TorchServe and prometheus_client read
 * it: each value is a family or sample name (exposition/name-filter.ts), so an empty one
 * (`name[]=`) selects nothing (an empty 200), like any unknown name. Another bracketed form (`name[0]`, `name[][x]`) would otherwise be
 * ignored and answer every family, which the caller did not ask for: it is refused.
 */
export function metricNamesFilter(url: string): NamesFilter {
  const qs = new URL(url, 'http://x').searchParams;
  for (const key of qs.keys()) {
    if (key.startsWith('name[') && key !== 'name[]')
      return { error: `parameter ${key} is not understood: use name[]=NAME, once per metric` };
  }
  const names = [...qs.getAll('name[]'), ...qs.getAll('name')];
  return { names: names.length > 0 ? names : undefined };
}

/** How the HTTP metrics name the route `/metrics/{*rest}` (recorded as `/metrics`, the same route). */
const SUBPATHS_HANDLER = '/metrics/[{rest...}]';

/** The handler a scrape is recorded under: excluded, so scrapes are never counted. */
const SCRAPE = '(scrape)';

/** Builds the metrics express app. */
/** `description`: the port's OpenAPI document, served at /openapi.json, /docs and OPTIONS / when given. */
export function metricsApp(
  metrics: MetricsPort,
  description?: Record<string, unknown>,
): Express & { readonly allowed: AllowedMethods } {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Scrapes (GET or HEAD of /metrics) are not counted (as in Requests2XX); anything else on
  // this port is: a 404, and a 405 to another method on /metrics, under that route.
  const http = new HttpMetrics((n, d) => bindOrNoop(metrics, n, d));
  const scrapes = new Set([SCRAPE]);
  app.use((req, res, next) => {
    http.track(
      req,
      res,
      () => {
        // `/metrics` and any path below it are one route, the exposition, under one handler.
        const raw = handlerOf(req);
        const h = raw === SUBPATHS_HANDLER ? '/metrics' : raw;
        return h === '/metrics' && (req.method === 'GET' || req.method === 'HEAD') ? SCRAPE : h;
      },
      scrapes,
    );
    next();
  });
  const scrape = (req: Request, res: Response): void => {
    const filter = metricNamesFilter(req.originalUrl);
    if ('error' in filter) return sendError(res, 400, filter.error);
    // With the sink off the answer is a comment, which only the text format allows.
    const format = metrics.modes.includes('prometheus') ? negotiate(req.get('accept')) : 'text';
    metrics.prometheusText(filter.names, format).then(
      (text) => {
        res
          .status(200)
          .set('content-type', format === 'text' ? metrics.prometheusContentType : contentType(format))
          .send(text);
      },
      (e: unknown) => sendError(res, 500, `could not render metrics: ${String(e)}`),
    );
  };
  const routes = routeTable().get('/metrics', scrape).get('/metrics/{*rest}', scrape);
  if (description !== undefined) describeRoutes(routes, description);
  app.use(routes.router);
  // A path that exists: another method is told which ones it takes, not that it is not found.
  const allowed = answerWrongMethods(app, routes.allowed(), (_req, res) =>
    sendError(res, 405, 'Requested method is not allowed, please refer to API document.'),
  );
  app.use(notFound);
  app.use(errorHandler);
  return Object.assign(app, { allowed });
}
