/**
 * Metrics API: `GET /metrics[?name[]=A&name[]=B]` → the Prometheus exposition, OpenMetrics 1.0
 * when the `Accept` header asks for it, else the text format 0.0.4. No auth, and scrapes are
 * not counted in Requests2XX (so a scraper does not inflate the request counts).
 */
import express from 'express';
import type { Express } from 'express';
import type { MetricsPort } from '../models/metrics-port.js';
import { contentType, negotiate } from '../metrics/exposition/negotiate.js';
import { errorHandler, notFound, sendError } from './errors.js';
import { HttpMetrics, handlerOf } from './http-metrics.js';

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

/** The handler a scrape is recorded under: excluded, so scrapes are never counted. */
const SCRAPE = '(scrape)';

/** Builds the metrics express app. */
export function metricsApp(metrics: MetricsPort): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Scrapes (GET or HEAD of /metrics) are not counted (as in Requests2XX); anything else on
  // this port is: a 404, and a 405 to another method on /metrics, under that route.
  const noop = { record: (): void => undefined };
  const http = new HttpMetrics((n, d) => metrics.get(n)?.bind(d) ?? noop);
  const scrapes = new Set([SCRAPE]);
  app.use((req, res, next) => {
    http.track(
      req,
      res,
      () => {
        const h = handlerOf(req);
        return h === '/metrics' && (req.method === 'GET' || req.method === 'HEAD') ? SCRAPE : h;
      },
      scrapes,
    );
    next();
  });
  app.get(['/metrics', '/metrics/{*rest}'], (req, res) => {
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
  });
  // The path exists: another method is told which ones it takes, not that it is not found.
  app.all(['/metrics', '/metrics/{*rest}'], (_req, res) => {
    res.setHeader('allow', 'GET, HEAD');
    sendError(res, 405, 'Requested method is not allowed, please refer to API document.');
  });
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
