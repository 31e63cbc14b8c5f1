/**
 * Metrics API: `GET /metrics[?name[]=A&name[]=B]` → the Prometheus exposition, OpenMetrics 1.0
 * when the `Accept` header asks for it, else the text format 0.0.4. No auth, and scrapes are
 * not counted in Requests2XX (so a scraper does not inflate the request counts).
 */
import express from 'express';
import type { Express } from 'express';
import type { MetricsPort } from '../server/metrics-port.js';
import { contentType, negotiate } from '../metrics/exposition/negotiate.js';
import { errorHandler, notFound, sendError } from './errors.js';
import { HttpMetrics } from './http-metrics.js';

/** The `name[]` (or `name`) filter of a metrics URL; empty means every family. */
export function metricNamesFilter(url: string): string[] {
  const qs = new URL(url, 'http://x').searchParams;
  return [...qs.getAll('name[]'), ...qs.getAll('name')].filter((n) => n !== '');
}

/** Builds the metrics express app. */
export function metricsApp(metrics: MetricsPort): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // Scrapes themselves are not counted (as in Requests2XX); 404s on this port are.
  const noop = { record: (): void => undefined };
  app.use(new HttpMetrics((n, d) => metrics.get(n)?.bind(d) ?? noop).middleware({ exclude: ['/metrics'] }));
  app.get(['/metrics', '/metrics/{*rest}'], (req, res) => {
    const names = metricNamesFilter(req.originalUrl);
    // With the sink off the answer is a comment, which only the text format allows.
    const format = metrics.modes.includes('prometheus') ? negotiate(req.get('accept')) : 'text';
    metrics.prometheusText(names.length > 0 ? names : undefined, format).then(
      (text) => { res.status(200).set('content-type', format === 'text' ? metrics.prometheusContentType : contentType(format)).send(text); },
      (e: unknown) => sendError(res, 500, `could not render metrics: ${String(e)}`),
    );
  });
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
