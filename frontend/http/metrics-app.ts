/**
 * Metrics API: `GET /metrics[?name[]=A&name[]=B]` → the Prometheus exposition. No auth, and
 * scrapes are not counted in Requests2XX (so a scraper does not inflate the request counts).
 */
import express from 'express';
import type { Express } from 'express';
import type { MetricsPort } from '../server/metrics-port.js';
import { errorHandler, notFound, sendError } from './errors.js';

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
  app.get(['/metrics', '/metrics/{*rest}'], (req, res) => {
    const names = metricNamesFilter(req.originalUrl);
    metrics.prometheusText(names.length > 0 ? names : undefined).then(
      (text) => { res.status(200).set('content-type', metrics.prometheusContentType).send(text); },
      (e: unknown) => sendError(res, 500, `could not render metrics: ${String(e)}`),
    );
  });
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
