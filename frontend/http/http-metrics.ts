/**
 * HTTP metrics, the families prometheus_fastapi_instrumentator gives vLLM's pod:
 * `http_requests_total{handler,method,status}`, `http_request_size_bytes{handler}`,
 * `http_response_size_bytes{handler}`, `http_request_duration_seconds{handler,method}` and
 * `http_request_duration_highr_seconds`. `handler` is the route template, so the series are
 * bounded: every path no route took shares `none` (the instrumentator's value), and methods
 * outside the usual seven share `other`. Series are bound once per (handler, method, status
 * class) and kept; a response records into bound series only.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import type { FrontendMetricName } from '../../schema/metric-catalog.js';
import { performance } from 'perf_hooks';
import type { Request, RequestHandler } from 'express';
import type { BoundSeries } from '../../schema/metrics-api.js';
import { responseBytes } from './response-bytes.js';
import { onResponseEnd } from './response-end.js';
import { msAsSeconds } from '../../schema/elapsed.js';

/** Binds one series of a declared metric (a no-op series when the yaml lacks it). */
export type BindSeries = (name: FrontendMetricName, dims: Readonly<Record<string, string>>) => BoundSeries;

/** The `handler` value of a request no route took. */
export const UNMATCHED_HANDLER = 'none';

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS', 'PATCH']);

/**
 * An express route path as the instrumentator's FastAPI template: `:model` → `{model}`, an
 * optional group `{/:version}` → `[/{version}]`, a wildcard `*rest` → `{rest...}`.
 */
export function routeTemplate(path: string): string {
  return path
    .replace(/\{([^{}]*)\}/g, '[$1]')
    .replace(/:([A-Za-z_$][\w$]*)/g, '{$1}')
    .replace(/\*([A-Za-z_$][\w$]*)/g, '{$1...}');
}

/** The route template of the route that answered `req`, or `none`. */
export function handlerOf(req: Request): string {
  const route = (req as { route?: { path?: unknown } }).route;
  if (route === undefined) return UNMATCHED_HANDLER;
  const p = Array.isArray(route.path) ? (route.path as unknown[])[0] : route.path;
  return typeof p === 'string' ? routeTemplate(req.baseUrl + p) : UNMATCHED_HANDLER;
}

/** `2xx`, `4xx`… (the instrumentator's grouped status codes). */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

interface HandlerSeries {
  readonly requestSize: BoundSeries;
  readonly responseSize: BoundSeries;
  readonly byMethod: Map<string, { readonly duration: BoundSeries; readonly byStatus: Map<string, BoundSeries> }>;
}

/** Options of the middleware. */
export interface HttpMetricsOptions {
  /** Route templates not recorded at all (e.g. `/metrics`, so scrapes do not count themselves). */
  readonly exclude?: readonly string[];
}

function sizeOf(v: unknown): number {
  const n = Number(v);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

/** The HTTP metrics of one or more listeners (share one instance across ports). */
export class HttpMetrics {
  private readonly handlers = new Map<string, HandlerSeries>();
  private readonly highr: BoundSeries;

  constructor(private readonly bind: BindSeries) {
    this.highr = bind('http_request_duration_highr_seconds', {});
  }

  /** Middleware recording every response once, on 'finish' or on a 'close' after headers went out. */
  middleware(opts: HttpMetricsOptions = {}): RequestHandler {
    const exclude = new Set(opts.exclude ?? []);
    return (req, res, next) => {
      this.track(req, res, () => handlerOf(req), exclude);
      next();
    };
  }

  /**
   * Records `res` once, on 'finish' or on a 'close' after its headers went out, under the route
   * template `handler()` gives then (express knows the route only once it has matched).
   */
  track(req: IncomingMessage, res: ServerResponse, handler: () => string, exclude?: ReadonlySet<string>): void {
    const startMs = performance.now();
    // Shared with the access log: write/end are wrapped once per response.
    const written = responseBytes(res);
    onResponseEnd(res, (finished) => {
      if (!finished && !res.headersSent) return;
      const h = handler();
      if (exclude?.has(h) === true) return;
      this.record(req, res.statusCode, h, msAsSeconds(performance.now() - startMs), written.bytes);
    });
  }

  private record(
    req: IncomingMessage,
    statusCode: number,
    handler: string,
    seconds: number,
    responseBytes: number,
  ): void {
    let h = this.handlers.get(handler);
    if (h === undefined) {
      h = {
        requestSize: this.bind('http_request_size_bytes', { handler }),
        responseSize: this.bind('http_response_size_bytes', { handler }),
        byMethod: new Map(),
      };
      this.handlers.set(handler, h);
    }
    const method = req.method !== undefined && METHODS.has(req.method) ? req.method : 'other';
    let m = h.byMethod.get(method);
    if (m === undefined) {
      m = { duration: this.bind('http_request_duration_seconds', { handler, method }), byStatus: new Map() };
      h.byMethod.set(method, m);
    }
    const status = statusClass(statusCode);
    let count = m.byStatus.get(status);
    if (count === undefined) {
      count = this.bind('http_requests_total', { handler, method, status });
      m.byStatus.set(status, count);
    }
    count.record(1);
    h.requestSize.record(sizeOf(req.headers['content-length']));
    h.responseSize.record(responseBytes);
    m.duration.record(seconds);
    this.highr.record(seconds);
  }
}
