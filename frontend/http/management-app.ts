/**
 * Management API (TorchServe paths and parameters): list, describe, register, scale and
 * unregister models.
 */
import { describeRoutes } from './openapi/openapi-routes.js';
import express from 'express';
import type { Request, Response, Router } from 'express';
import type { IncomingMessage, ServerResponse } from 'http';
import type { StatusRouteContext } from './status-routes.js';
import type { FrontendSeries } from '../models/frontend-series.js';
import type { ModelManager } from '../models/model-manager.js';
import { RegistrationError } from '../models/model-manager.js';
import { readyWorkers } from '../models/health.js';
import type { ServedModel } from '../models/served-model.js';
import type { AllowedMethods } from './allowed-methods.js';
import { answerWrongMethods } from './allowed-methods.js';
import { routeTable } from './route-table.js';
import type { BodyLimits } from '../models/body-limits.js';
import { bodyLimits } from '../models/body-limits.js';
import { bodyGuard, guardedBody } from './body-guard.js';
import { parseJsonBody } from './json-body.js';
import { topLevelKeyCounts } from './json-keys.js';
import { countResponses } from './count-responses.js';
import { errorHandler, notFound, sendError } from './errors.js';
import { HttpMetrics } from './http-metrics.js';
import { QueryParams } from './query-params.js';
import { MODEL_BOUNDS } from '../store/model-bounds.js';
import { requireToken } from './token-auth.js';

/** What the management app needs. */
export interface ManagementAppOptions {
  /** This port's OpenAPI document: served at /openapi.json, /docs and OPTIONS / when given. */
  readonly description?: Record<string, unknown>;
  readonly manager: ModelManager;
  readonly series: FrontendSeries;
  readonly token?: string;
  /** Bounds on request bodies (management routes take none: a body is read and dropped). */
  readonly bodyLimits?: BodyLimits;
  /**
   * The status page's routes (`GET /`, `/status`, `/status.json`, its script and style), built
   * with what the app's chain does, for the fast `/status.json` (status-routes.ts).
   */
  readonly status?: (ctx: StatusRouteContext) => Router;
}

/** Where a worker's load failure is told (the answer cannot carry it: the pool logs it). */
const SEE_LOG = 'the reason is in ts_log.log';

/**
 * The parameters of a registration: the query's, or, as TorchServe reads them, the fields of a
 * JSON body (`Content-Type: application/json`, `{"url": "mlp", "initial_workers": 2}`; numbers and
 * booleans as their text, so the query's strict reading applies to both). Both at once is a 400
 * rather than a silent choice, and so is a key written twice (the query's parameter given twice).
 */
function registrationParams(
  req: Request,
  limits: BodyLimits,
):
  | { readonly values: Readonly<Record<string, unknown>>; readonly unreadBodyType?: string }
  | { readonly error: string } {
  const body = guardedBody(req);
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (body === undefined || body.length === 0) return { values: req.query };
  // Not read, but named when the url is then missing: `curl -d '{"url": …}'` sends a form.
  if (type !== 'application/json') return { values: req.query, unreadBodyType: type === '' ? 'not given' : type };
  const parsed = parseJsonBody(body, limits);
  if ('status' in parsed) return { error: parsed.message };
  const doc = parsed.value;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return { error: 'the JSON body of a registration must be an object of its parameters ({"url": "mlp", ...})' };
  if (Object.keys(req.query).length > 0)
    return { error: "give the registration's parameters in the query or in a JSON body, not both" };
  for (const [k, n] of topLevelKeyCounts(body.toString('utf8')))
    if (n > 1) return { error: `parameter ${k} must be given once (got ${n} values)` };
  const values: Record<string, string> = {};
  for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
    if (typeof v === 'string') values[k] = v;
    else if ((typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean') values[k] = String(v);
    else if (v !== null)
      return {
        error: `field ${k} of the JSON body must be a string, a number or a boolean (got ${JSON.stringify(v)})`,
      };
  }
  return { values };
}

/** What `POST /models` takes, and why it takes none of TorchServe's other parameters. */
const REGISTER_PARAMS = [
  'url',
  'model_name',
  'batch_size',
  'max_batch_delay',
  'initial_workers',
  'response_timeout',
  'synchronous',
] as const;
const REGISTER_NOTES = Object.freeze({
  handler: "the model directory's model-config.yaml names its handler",
  runtime: "the model directory's model-config.yaml names its handler, which says how it runs",
  startup_timeout: "the server's --model-load-timeout bounds every worker's load",
  s3_sse_kms: 'tsserve downloads no model',
});
/** What `PUT /models/{name}` takes, and why it takes none of TorchServe's other parameters. */
const SCALE_PARAMS = ['min_worker', 'max_worker', 'synchronous', 'timeout'] as const;
const SCALE_NOTES = Object.freeze({ number_gpu: "tsserve's workers run on the CPU" });
/** The one `timeout` a scale takes: TorchServe's default, what a scale-down here always does. */
const SCALE_TIMEOUT = '-1';

/** Longest model name a registration takes: a directory name's bound (NAME_MAX). */
const MAX_MODEL_NAME = 255;

/** Most models one `GET /models` page lists (TorchServe's). */
const PAGE_MAX = 100;
/** `limit` and `next_page_token` are Java ints in TorchServe. */
const PAGE_BOUNDS = Object.freeze({
  limit: { min: 1, max: 2_147_483_647, unit: '' },
  nextPageToken: { min: 0, max: 2_147_483_647, unit: '' },
});

/** The management express app, and the methods each of its paths takes (what its 405s say in `Allow`). */
export type ManagementApp = ((req: IncomingMessage, res: ServerResponse) => void) & {
  readonly allowed: AllowedMethods;
};

/** Builds the management express app. */
export function managementApp(opts: ManagementAppOptions): ManagementApp {
  const { manager } = opts;
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(countResponses((s) => opts.series.countResponse(s)));
  const httpMetrics = new HttpMetrics((n, d) => opts.series.bind(n, d));
  app.use(httpMetrics.middleware());
  const limits = bodyLimits(opts.bodyLimits);
  // The key first, from the headers: a client without it must not make us read its body.
  if (opts.token !== undefined) app.use(requireToken(opts.token));
  app.use(bodyGuard(limits, { discard: true }));
  // The description first: OPTIONS / is its, not express's automatic answer for the status page's GET /.
  const routes = routeTable();
  if (opts.description !== undefined) describeRoutes(routes, opts.description);
  if (opts.status !== undefined)
    routes.mount(
      opts.status({
        countResponse: (s) => opts.series.countResponse(s),
        httpMetrics,
        limits,
        ...(opts.token !== undefined ? { token: opts.token } : {}),
      }),
    );

  // TorchServe's pagination: `limit` models (at most 100, a larger limit is clamped) from
  // `next_page_token` (an offset in name order), and `nextPageToken` while more remain.
  routes.get('/models', (req, res) => {
    const p = new QueryParams(req.query);
    const limit = Math.min(p.int('limit', PAGE_BOUNDS.limit) ?? PAGE_MAX, PAGE_MAX);
    const from = p.int('next_page_token', PAGE_BOUNDS.nextPageToken) ?? 0;
    if (p.error !== null) return sendError(res, 400, p.error);
    const all = manager.list();
    const page = all
      .slice(from, from + limit)
      .map((m) => ({ modelName: m.config.name, modelVersion: m.config.version, modelUrl: m.describe().modelUrl }));
    res.json(from + limit < all.length ? { nextPageToken: String(from + limit), models: page } : { models: page });
  });

  /** The model `/models/{name}[/{version}]` names, or undefined after answering 404. */
  const named = (req: Request, res: Response): ServedModel | undefined => {
    const m = manager.get(String(req.params.name));
    if (m === undefined) {
      sendError(res, 404, `Model not found: ${String(req.params.name)}`);
      return undefined;
    }
    if (req.params.version !== undefined && String(req.params.version) !== m.config.version) {
      sendError(res, 404, `Model version ${String(req.params.version)} not found for model ${m.config.name}`);
      return undefined;
    }
    return m;
  };

  routes.get('/models/:name{/:version}', (req, res) => {
    // TorchServe's customized=true adds the handler's describe_handle answer; a handler here has
    // no such hook, and a describe without the field asked for would look like an empty one.
    const p = new QueryParams(req.query);
    const customized = p.bool('customized', false);
    if (p.error !== null) return sendError(res, 400, p.error);
    if (customized)
      return sendError(
        res,
        400,
        "parameter customized=true asks for the handler's customizedMetadata (TorchServe's describe_handle); tsserve's handlers have no such hook: leave it out",
      );
    // TorchServe's `/models/{name}/all` describes every version: a model here has one.
    const m = req.params.version === 'all' ? manager.get(String(req.params.name)) : named(req, res);
    if (m === undefined)
      return req.params.version === 'all'
        ? sendError(res, 404, `Model not found: ${String(req.params.name)}`)
        : undefined;
    res.json([m.describe()]);
  });

  routes.post('/models', (req, res, next) => {
    const params = registrationParams(req, limits);
    if ('error' in params) return sendError(res, 400, params.error);
    const p = new QueryParams(params.values);
    p.only('POST /models', REGISTER_PARAMS, REGISTER_NOTES);
    const url = p.string('url');
    const modelName = p.string('model_name');
    const batchSize = p.int('batch_size', MODEL_BOUNDS.batchSize);
    const maxBatchDelayMs = p.int('max_batch_delay', MODEL_BOUNDS.maxBatchDelay);
    const initial = p.int('initial_workers', MODEL_BOUNDS.minWorkers);
    const responseTimeoutSec = p.int('response_timeout', MODEL_BOUNDS.responseTimeout);
    const sync = p.bool('synchronous', true);
    if (p.error !== null) return sendError(res, 400, p.error);
    if (url === undefined || url === '') {
      const unread =
        'unreadBodyType' in params && params.unreadBodyType !== undefined
          ? ` The body was not read: its Content-Type is ${params.unreadBodyType}; give the parameters in the query, or as a JSON body with Content-Type: application/json.`
          : '';
      return sendError(res, 400, `Parameter url is required (a model directory inside the model store).${unread}`);
    }
    const name = modelName ?? url.replace(/\/+$/, '').split('/').pop() ?? url;
    // A model directory's name has at most 255 bytes; a longer model_name was registered, but
    // its workers' metrics (ModelName, WorkerName past 1,024 characters) were all dropped.
    if (name.length > MAX_MODEL_NAME)
      return sendError(
        res,
        400,
        `model name of ${name.length} characters is too long (at most ${MAX_MODEL_NAME}, as a model directory's name)`,
      );
    const overrides = {
      ...(batchSize !== undefined ? { batchSize } : {}),
      ...(maxBatchDelayMs !== undefined ? { maxBatchDelayMs } : {}),
      ...(responseTimeoutSec !== undefined ? { responseTimeoutSec } : {}),
      // TorchServe sets both bounds to initial_workers; 0 keeps the model-config's maxWorkers, else
      // the model registered to be scaled later could never be (min_worker above maxWorkers 0).
      ...(initial !== undefined ? { minWorkers: initial, ...(initial > 0 ? { maxWorkers: initial } : {}) } : {}),
    };
    const existed = manager.get(name) !== undefined;
    const started = manager.register({ name, url, overrides, loadedAtStartup: false });
    const answer = (m: ServedModel, workers: number): void => {
      const scaleLater = workers === 0 ? '. Use scale workers API to add workers for the model.' : '';
      res.json({
        status: `Model "${name}" Version: ${m.config.version} registered with ${workers} initial workers${scaleLater}`,
      });
    };
    started
      .then(async (m) => {
        if (m === null) return sendError(res, 501, `model ${name}: its kind is not served by this build`);
        if (!sync) return;
        // A DELETE (or a DELETE and a new registration) came while its workers started: the
        // registration is gone, which no worker failure explains (ts_log.log says nothing of it).
        if (manager.get(name) !== m)
          return sendError(
            res,
            409,
            `model ${name} was unregistered while its workers were starting; it is not registered`,
          );
        const want = m.describe().minWorkers;
        const ready = readyWorkers(m.describe());
        if (want > 0 && ready === 0) {
          // TorchServe's answer (500, the registration undone): a model none of whose workers
          // loads is not left retrying behind a 200, and can be registered again once fixed.
          if (manager.get(name) === m) await manager.unregister(name);
          return sendError(
            res,
            500,
            `Failed to start workers for model ${name}: none of its ${want} workers loaded (${SEE_LOG}); the model is not registered`,
          );
        }
        answer(m, ready);
      })
      .catch((e: unknown) => {
        if (e instanceof RegistrationError) return sendError(res, e.status, e.message);
        next(e);
      });
    // Asynchronous registration: answer once the config is accepted (workers start behind), in
    // TorchServe's words; a model that starts no worker has nothing in progress, so it is the 200.
    if (!sync) {
      setImmediate(() => {
        const m = manager.get(name);
        if (existed || res.headersSent || m === undefined) return;
        if (m.describe().minWorkers === 0) answer(m, 0);
        else res.status(202).json({ status: 'Processing worker updates...' });
      });
    }
  });

  routes.put('/models/:name{/:version}', (req, res, next) => {
    const m = named(req, res);
    if (m === undefined) return;
    // Refused before the 202 of an asynchronous scale, which would otherwise promise updates that never come.
    if (m.notScalable !== undefined) return sendError(res, 400, m.notScalable);
    const p = new QueryParams(req.query);
    p.only('PUT /models/{name}', SCALE_PARAMS, SCALE_NOTES);
    const min = p.int('min_worker', MODEL_BOUNDS.minWorkers);
    const max = p.int('max_worker', MODEL_BOUNDS.maxWorkers);
    const sync = p.bool('synchronous', false);
    const timeout = p.string('timeout');
    if (p.error !== null) return sendError(res, 400, p.error);
    if (timeout !== undefined && timeout !== SCALE_TIMEOUT) {
      return sendError(
        res,
        400,
        `parameter timeout must be -1 (got '${timeout}'): a worker a scale-down retires finishes what it holds first (a generation within the model's responseTimeout), as TorchServe's -1 waits`,
      );
    }
    const newMin = min ?? m.config.minWorkers;
    // An explicit max below the min is a client error (TorchServe's 400), not something to clamp silently.
    if (max !== undefined && max < newMin)
      return sendError(res, 400, `max_worker cannot be less than min_worker (${max} < ${newMin})`);
    // A maximum no scale could reach is refused too, rather than stored and shown by GET.
    if (max !== undefined && max > manager.maxWorkers)
      return sendError(res, 400, `max_worker ${max} is over --max-workers ${manager.maxWorkers}`);
    const newMax = max ?? m.config.maxWorkers;
    // Bounded by the model's maxWorkers and the server's --max-workers: a 400 naming the bound.
    const refused = manager.scaleRefusal(m.config.name, newMin, newMax);
    if (refused !== null) return sendError(res, 400, refused);
    const done = m.scale(newMin, newMax);
    manager.onChange(); // the new minWorkers (a front refuses a model scaled to 0 itself)
    done.finally(() => manager.onChange()).catch(() => undefined);
    if (!sync) {
      res.status(202).json({ status: 'Processing worker updates...' });
      done.catch(() => undefined);
      return;
    }
    done.then(() => {
      // Unregistered meanwhile: its workers were stopped, not failed.
      if (manager.get(m.config.name) !== m)
        return sendError(
          res,
          409,
          `model ${m.config.name} was unregistered before this scale (to ${newMin} workers) was done`,
        );
      // A scale requested meanwhile replaced this one: neither its success nor a failure.
      const now = m.describe().minWorkers;
      if (now !== newMin)
        return sendError(
          res,
          409,
          `a later scale of model ${m.config.name} (to ${now} workers) replaced this one (to ${newMin})`,
        );
      const ready = readyWorkers(m.describe());
      // TorchServe's 500 when the new workers do not start, rather than a 200 for a scale that did not happen.
      if (ready < newMin)
        return sendError(
          res,
          500,
          `Failed to start workers for model ${m.config.name}: ${ready} of ${newMin} ready (${SEE_LOG})`,
        );
      // TorchServe names the version when the path does.
      const version = req.params.version !== undefined ? `, version: ${m.config.version}` : '';
      res.json({ status: `Workers scaled to ${newMin} for model: ${m.config.name}${version}` });
    }, next);
  });

  // TorchServe's set-default: a model has one version here, so naming it is the only change
  // that can succeed (and changes nothing); another version is the usual 404.
  routes.put('/models/:name/:version/set-default', (req, res) => {
    const m = named(req, res);
    if (m === undefined) return;
    res.json({ status: `Default version successfully updated for model "${m.config.name}" to "${m.config.version}"` });
  });

  routes.delete('/models/:name{/:version}', (req, res, next) => {
    const name = String(req.params.name);
    if (named(req, res) === undefined) return;
    manager.unregister(name).then(() => res.json({ status: `Model "${name}" unregistered` }), next);
  });

  app.use(routes.router);

  // A path that exists with a method it does not take is TorchServe's 405 (with the methods it
  // takes), not a 404 saying the model or path does not exist.
  const allowed = answerWrongMethods(app, routes.allowed(), (_req, res) =>
    sendError(res, 405, 'Requested method is not allowed, please refer to API document.'),
  );

  app.use(notFound);
  app.use(errorHandler);
  // The fast routes (the status page's data) first, on node's request; the rest through express.
  return Object.assign(routes.listener(app), { allowed });
}
