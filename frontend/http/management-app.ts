/**
 * Management API (TorchServe paths and parameters): list, describe, register, scale and
 * unregister models.
 */
import express from 'express';
import type { Express, Request, Response } from 'express';
import type { FrontendSeries } from '../server/frontend-series.js';
import type { ModelManager } from '../server/model-manager.js';
import { RegistrationError } from '../server/model-manager.js';
import type { ServedModel } from '../server/served-model.js';
import type { BodyLimits } from './body-limits.js';
import { bodyLimits } from './body-limits.js';
import { bodyGuard } from './body-guard.js';
import { countResponses } from './count-responses.js';
import { errorHandler, notFound, sendError } from './errors.js';
import { HttpMetrics } from './http-metrics.js';
import { requireToken } from './token-auth.js';

/** What the management app needs. */
export interface ManagementAppOptions {
  readonly manager: ModelManager;
  readonly series: FrontendSeries;
  readonly token?: string;
  /** Bounds on request bodies (management routes take none: a body is read and dropped). */
  readonly bodyLimits?: BodyLimits;
}

function q(req: Request, key: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[key];
  if (Array.isArray(v)) return v.length > 0 ? String(v[v.length - 1]) : undefined;
  return v === undefined ? undefined : String(v);
}

/** Parses an optional integer query parameter; answers 400 and returns null when invalid. */
function intParam(req: Request, res: Response, key: string, min: number): number | undefined | null {
  const v = q(req, key);
  if (v === undefined || v === '') return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) {
    sendError(res, 400, `parameter ${key} must be an integer >= ${min} (got '${v}')`);
    return null;
  }
  return n;
}

function boolParam(req: Request, key: string, def: boolean): boolean {
  const v = q(req, key);
  return v === undefined ? def : v === 'true' || v === '1';
}

/** Builds the management express app. */
export function managementApp(opts: ManagementAppOptions): Express {
  const { manager } = opts;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(countResponses((s) => opts.series.countResponse(s)));
  app.use(new HttpMetrics((n, d) => opts.series.bind(n, d)).middleware());
  app.use(bodyGuard(bodyLimits(opts.bodyLimits), { discard: true }));
  if (opts.token !== undefined) app.use(requireToken(opts.token));

  app.get('/models', (_req, res) => {
    res.json({ models: manager.list().map((m) => ({ modelName: m.config.name, modelVersion: m.config.version, modelUrl: m.describe().modelUrl })) });
  });

  /** The model `/models/{name}[/{version}]` names, or undefined after answering 404. */
  const named = (req: Request, res: Response): ServedModel | undefined => {
    const m = manager.get(String(req.params.name));
    if (m === undefined) { sendError(res, 404, `Model not found: ${String(req.params.name)}`); return undefined; }
    if (req.params.version !== undefined && String(req.params.version) !== m.config.version) {
      sendError(res, 404, `Model version ${String(req.params.version)} not found for model ${m.config.name}`);
      return undefined;
    }
    return m;
  };

  app.get('/models/:name{/:version}', (req, res) => {
    // TorchServe's `/models/{name}/all` describes every version: a model here has one.
    const m = req.params.version === 'all' ? manager.get(String(req.params.name)) : named(req, res);
    if (m === undefined) return req.params.version === 'all' ? sendError(res, 404, `Model not found: ${String(req.params.name)}`) : undefined;
    res.json([m.describe()]);
  });

  app.post('/models', (req, res, next) => {
    const url = q(req, 'url');
    if (url === undefined || url === '') return sendError(res, 400, 'Parameter url is required (a model directory inside the model store).');
    const name = q(req, 'model_name') ?? url.replace(/\/+$/, '').split('/').pop() ?? url;
    const batchSize = intParam(req, res, 'batch_size', 1); if (batchSize === null) return;
    const maxBatchDelayMs = intParam(req, res, 'max_batch_delay', 0); if (maxBatchDelayMs === null) return;
    const initial = intParam(req, res, 'initial_workers', 0); if (initial === null) return;
    const responseTimeoutSec = intParam(req, res, 'response_timeout', 1); if (responseTimeoutSec === null) return;
    const sync = boolParam(req, 'synchronous', true);
    const overrides = {
      ...(batchSize !== undefined ? { batchSize } : {}),
      ...(maxBatchDelayMs !== undefined ? { maxBatchDelayMs } : {}),
      ...(responseTimeoutSec !== undefined ? { responseTimeoutSec } : {}),
      ...(initial !== undefined ? { minWorkers: initial, maxWorkers: initial } : {}),
    };
    const existed = manager.get(name) !== undefined;
    const started = manager.register({ name, url, overrides, loadedAtStartup: false });
    const answer = (workers: number): void => {
      res.json({ status: `Model "${name}" Version: ${manager.get(name)?.config.version ?? ''} registered with ${workers} initial workers` });
    };
    started.then((m) => {
      if (m === null) return sendError(res, 501, `model ${name}: its kind is not served by this build`);
      if (sync) answer(m.describe().workers.length);
    }, (e: unknown) => {
      if (e instanceof RegistrationError) return sendError(res, e.status, e.message);
      next(e);
    });
    // Asynchronous registration: answer once the config is accepted (workers start behind).
    if (!sync) setImmediate(() => { if (!existed && !res.headersSent && manager.get(name) !== undefined) res.status(202).json({ status: `Model "${name}" registered; workers starting` }); });
  });

  app.put('/models/:name{/:version}', (req, res, next) => {
    const m = named(req, res);
    if (m === undefined) return;
    // Refused before the 202 of an asynchronous scale, which would otherwise promise updates that never come.
    if (m.notScalable !== undefined) return sendError(res, 400, m.notScalable);
    const min = intParam(req, res, 'min_worker', 0); if (min === null) return;
    const max = intParam(req, res, 'max_worker', 0); if (max === null) return;
    const newMin = min ?? m.config.minWorkers;
    // An explicit max below the min is a client error (TorchServe's 400), not something to clamp silently.
    if (max !== undefined && max < newMin) return sendError(res, 400, `max_worker cannot be less than min_worker (${max} < ${newMin})`);
    const newMax = max ?? m.config.maxWorkers;
    // Bounded by the model's maxWorkers and the server's --max-workers: a 400 naming the bound.
    const refused = manager.scaleRefusal(m.config.name, newMin, newMax);
    if (refused !== null) return sendError(res, 400, refused);
    const sync = boolParam(req, 'synchronous', false);
    const done = m.scale(newMin, newMax);
    if (!sync) {
      res.status(202).json({ status: 'Processing worker updates...' });
      done.catch(() => undefined);
      return;
    }
    done.then(() => res.json({ status: `Workers scaled to ${newMin} for model: ${m.config.name}` }), next);
  });

  app.delete('/models/:name{/:version}', (req, res, next) => {
    const name = String(req.params.name);
    if (named(req, res) === undefined) return;
    manager.unregister(name).then(() => res.json({ status: `Model "${name}" unregistered` }), next);
  });

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
