/**
 * The Open Inference Protocol (KServe v2) REST routes on the inference listener that express
 * serves: server and model health, server and model metadata. `POST .../infer` is served
 * outside express (infer-route.ts). Errors are `{"error": "..."}`.
 */
import { readFileSync } from 'fs';
import * as path from 'path';
import { routeTable } from '../route-table.js';
import type { ErrorRequestHandler, Request, Response, Router } from 'express';
import { healthOf, readyWorkers } from '../../models/health.js';
import type { ServedModel } from '../../models/served-model.js';
import { BUILT_IN_HANDLERS } from '../../store/model-config.js';
import { modelIoOf } from './io-cache.js';
import { sendOipError } from './oip-error.js';

/** What the routes need. */
export interface OipRouterOptions {
  readonly lookup: (name: string) => ServedModel | undefined;
  readonly list?: () => readonly ServedModel[];
}

/** The server metadata's name and its one extension. */
const SERVER_NAME = 'tsserve';
const EXTENSIONS = ['binary_tensor_data'] as const;

/** The `platform` of a model a built-in handler serves: an ONNX file on onnxruntime (Triton's name). */
const ONNX_PLATFORM = 'onnxruntime_onnx';
/** …and of a model a user handler serves: what runs it is the handler's business, not onnxruntime's. */
const HANDLER_PLATFORM = 'tsserve_handler';
/** …and of a pipeline: a chain of the store's models with no model file of its own, Triton's ensemble. */
const PIPELINE_PLATFORM = 'ensemble';

/** The metadata's `platform` of a model served by `handler`. */
function platformOf(handler: string): string {
  if (handler === 'pipeline') return PIPELINE_PLATFORM;
  return BUILT_IN_HANDLERS.has(handler) ? ONNX_PLATFORM : HANDLER_PLATFORM;
}

function packageVersion(): string {
  try {
    // This file runs from dist/frontend/http/oip; package.json is at the repo root.
    const file = path.resolve(import.meta.dirname, '..', '..', '..', '..', 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** True when the model has a worker that can take requests. */
export function modelReady(m: ServedModel): boolean {
  return readyWorkers(m.describe()) > 0;
}

/** Builds the `/v2` router. */
export function oipRouter(opts: OipRouterOptions): Router {
  const r = routeTable();
  const version = packageVersion();
  /** The model the URL names, or undefined after answering 404. */
  const named = (req: Request, res: Response): ServedModel | undefined => {
    const name = String(req.params.model);
    const m = opts.lookup(name);
    if (m === undefined) {
      sendOipError(res, 404, `Model not found: ${name}`);
      return undefined;
    }
    const v = req.params.version === undefined ? undefined : String(req.params.version);
    if (v !== undefined && v !== m.config.version) {
      sendOipError(res, 404, `Model version ${v} not found for model ${name}`);
      return undefined;
    }
    return m;
  };

  r.get('/v2', (_req, res) => {
    res.json({ name: SERVER_NAME, version, extensions: EXTENSIONS });
  });
  r.get('/v2/health/live', (_req, res) => {
    res.status(200).end();
  });
  // Ready when every model that wants workers has one, /health's rule: a model scaled to 0 on
  // purpose (min_worker=0, Triton's unload) must not take the whole server out of a balancer.
  r.get('/v2/health/ready', (_req, res) => {
    const models = opts.list?.() ?? [];
    res.status(healthOf(models).serving ? 200 : 400).end();
  });
  r.get('/v2/models/:model{/versions/:version}/ready', (req, res) => {
    const m = named(req, res);
    if (m !== undefined) res.status(modelReady(m) ? 200 : 400).end();
  });
  r.get('/v2/models/:model{/versions/:version}', (req, res) => {
    const m = named(req, res);
    if (m === undefined) return;
    void modelIoOf(m).then((io) => {
      res.json({
        name: m.config.name,
        versions: [m.config.version],
        platform: platformOf(m.config.handler),
        inputs: io?.inputs ?? [],
        outputs: io?.outputs ?? [],
      });
    });
  });
  const onError: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (!req.path.startsWith('/v2/')) {
      next(err);
      return;
    }
    const e = (typeof err === 'object' && err !== null ? err : {}) as {
      type?: string;
      message?: string;
      limit?: number;
      status?: number;
    };
    if (e.type === 'entity.too.large')
      return sendOipError(res, 413, `request body exceeds the limit of ${String(e.limit)} bytes (--max-request-size)`);
    // The router's own refusals carry their status (a malformed `%zz` parameter is a 400).
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 500;
    return sendOipError(res, status, e.message ?? String(err));
  };
  r.use(onError);
  return r.router;
}
