/**
 * The Open Inference Protocol (KServe v2) REST routes on the inference listener: server and
 * model health, server and model metadata, and `POST /v2/models/{m}[/versions/{v}]/infer` with
 * JSON tensors or the binary tensor data extension. An inference of shape [N, …] is N rows sent
 * through the model's batcher like N /predictions bodies, counted once in
 * `ts_inference_requests_total` (one HTTP request, as /predictions counts), its latency and
 * queue time (the longest row's wait) added once; errors are `{"error": "..."}`.
 */
import { randomUUID } from 'crypto';
import { readFileSync } from 'fs';
import * as path from 'path';
import { performance } from 'perf_hooks';
import express from 'express';
import type { ErrorRequestHandler, Request, RequestHandler, Response, Router } from 'express';
import type { JobOutcome } from '../../batching/job.js';
import { parseTraceparent, traceIds } from '../../metrics/exposition/trace-ids.js';
import type { FrontendSeries, ModelSeries } from '../../server/frontend-series.js';
import type { ServedModel } from '../../server/served-model.js';
import { predictionTiming } from '../server-timing.js';
import type { ModelIo } from './onnx-io.js';
import { readOnnxIo } from './onnx-io.js';
import { rawBody } from './raw-body.js';
import type { EncodedResponse, OutputTensor } from './tensor-codec.js';
import { decodeInferRequest, encodeInferResponse, OipError } from './tensor-codec.js';

/** What the routes need. */
export interface OipRouterOptions {
  readonly lookup: (name: string) => ServedModel | undefined;
  readonly list?: () => readonly ServedModel[];
  readonly series: FrontendSeries;
  readonly maxRequestSizeBytes: number;
}

/** The server metadata's name and its one extension. */
const SERVER_NAME = 'tsserve';
const EXTENSIONS = ['binary_tensor_data'] as const;

/** The `platform` of an ONNX model (Triton's name). */
const PLATFORM = 'onnxruntime_onnx';

/** The header giving the JSON part's length in a binary body. */
const HEADER_LENGTH = 'inference-header-content-length';

/** An error in the protocol's shape: `{"error": message}`. */
export function sendOipError(res: Response, status: number, message: string): void {
  if (res.headersSent) return;
  res.status(status).json({ error: message });
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
  return m.describe().workers.some((w) => w.status === 'READY' || w.status === 'BUSY');
}

/** Builds the `/v2` router. */
export function oipRouter(opts: OipRouterOptions): Router {
  const r = express.Router();
  const version = packageVersion();
  const ioCache = new WeakMap<ServedModel, Promise<ModelIo | null>>();
  const ioOf = (m: ServedModel): Promise<ModelIo | null> => {
    let p = ioCache.get(m);
    if (p === undefined) {
      const file = path.join(m.config.dir, m.config.modelFile);
      p = file.endsWith('.onnx') ? readOnnxIo(file).catch(() => null) : Promise.resolve(null);
      ioCache.set(m, p);
    }
    return p;
  };
  /** The model the URL names, or undefined after answering 404. */
  const named = (req: Request, res: Response): ServedModel | undefined => {
    const name = String(req.params.model);
    const m = opts.lookup(name);
    if (m === undefined) { sendOipError(res, 404, `Model not found: ${name}`); return undefined; }
    const v = req.params.version === undefined ? undefined : String(req.params.version);
    if (v !== undefined && v !== m.config.version) { sendOipError(res, 404, `Model version ${v} not found for model ${name}`); return undefined; }
    return m;
  };

  r.get('/v2', (_req, res) => { res.json({ name: SERVER_NAME, version, extensions: EXTENSIONS }); });
  r.get('/v2/health/live', (_req, res) => { res.status(200).end(); });
  r.get('/v2/health/ready', (_req, res) => {
    const models = opts.list?.() ?? [];
    res.status(models.every(modelReady) ? 200 : 400).end();
  });
  r.get('/v2/models/:model{/versions/:version}/ready', (req, res) => {
    const m = named(req, res);
    if (m !== undefined) res.status(modelReady(m) ? 200 : 400).end();
  });
  r.get('/v2/models/:model{/versions/:version}', (req, res) => {
    const m = named(req, res);
    if (m === undefined) return;
    void ioOf(m).then((io) => {
      res.json({ name: m.config.name, versions: [m.config.version], platform: PLATFORM, inputs: io?.inputs ?? [], outputs: io?.outputs ?? [] });
    });
  });
  r.post('/v2/models/:model{/versions/:version}/infer',
    rawBody(opts.maxRequestSizeBytes),
    infer(opts, named, ioOf));
  const onError: ErrorRequestHandler = (err: unknown, req, res, next) => {
    if (!req.path.startsWith('/v2/')) { next(err); return; }
    const e = (typeof err === 'object' && err !== null ? err : {}) as { type?: string; message?: string; limit?: number; status?: number };
    if (e.type === 'entity.too.large') return sendOipError(res, 413, `request body exceeds the limit of ${String(e.limit)} bytes (--max-request-size)`);
    // The router's own refusals carry their status (a malformed `%zz` parameter is a 400).
    const status = typeof e.status === 'number' && e.status >= 400 && e.status < 500 ? e.status : 500;
    return sendOipError(res, status, e.message ?? String(err));
  };
  r.use(onError);
  return r;
}

/** The `model_version` label of a request that names no version (as /predictions). */
const UNNAMED_VERSION_LABEL = 'default';

function infer(
  opts: OipRouterOptions,
  named: (req: Request, res: Response) => ServedModel | undefined,
  ioOf: (m: ServedModel) => Promise<ModelIo | null>,
): RequestHandler {
  const seriesCache = new WeakMap<ServedModel, { unnamed?: ModelSeries; named?: ModelSeries }>();
  return (req, res) => {
    const arrivalMs = performance.now();
    const model = named(req, res);
    if (model === undefined) return;
    const submit = model.submit?.bind(model);
    if (submit === undefined) return sendOipError(res, 400, `model ${model.config.name} does not serve inference requests (kind ${model.kind})`);
    void ioOf(model).then((io) => {
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const h = req.headers[HEADER_LENGTH];
      const headerLength = h === undefined ? undefined : Number(h);
      let rows: number[][];
      let outputs: { name: string; binary: boolean }[];
      let id: string | undefined;
      try {
        const r = decodeInferRequest(body, headerLength);
        id = r.id;
        rows = toRows(r.inputs, io, model.config.name);
        const outName = io?.outputs[0]?.name ?? 'output0';
        outputs = (r.outputs ?? [{ name: outName, binary: r.binaryOutput }]).map((o) => {
          if (o.name !== outName) throw new OipError(400, `unexpected inference output '${o.name}' for model '${model.config.name}'`);
          return o;
        });
      } catch (e) {
        // Inside a promise callback: a rethrow would be an unhandled rejection, so answer 500.
        if (e instanceof OipError) return sendOipError(res, e.status, e.message);
        return sendOipError(res, 500, String(e));
      }
      const version = req.params.version === undefined ? undefined : String(req.params.version);
      let bound = seriesCache.get(model);
      if (bound === undefined) { bound = {}; seriesCache.set(model, bound); }
      const s = version === undefined
        ? (bound.unnamed ??= opts.series.forModel(model.config.name, UNNAMED_VERSION_LABEL))
        : (bound.named ??= opts.series.forModel(model.config.name, version));
      run(model, submit, rows, arrivalMs, req, res, s, (results) => {
        const flat = flatRows(results);
        const width = results.length === 0 ? 0 : flat.length / results.length;
        const tensors: OutputTensor[] = outputs.map((o) => ({ name: o.name, shape: [results.length, width], datatype: 'FP32', data: flat, binary: o.binary }));
        return encodeInferResponse({ model_name: model.config.name, model_version: model.config.version, ...(id !== undefined ? { id } : {}), outputs: tensors });
      });
    });
  };
}

/** A value's kind for an error message: `an object`, `a string`, `null`. */
function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'missing';
  const t = typeof v;
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}

/**
 * The rows' answers as one FP32 tensor. Each row must be an array of numbers, all of one length:
 * anything else (a handler answering an object or a string, rows of two widths) throws, so the
 * request gets a 500 naming the row instead of a 200 with an empty or misaligned tensor.
 */
export function flatRows(results: readonly unknown[]): Float32Array {
  const first = results[0];
  const width = Array.isArray(first) ? first.length : -1;
  results.forEach((row, k) => {
    if (!Array.isArray(row)) throw new Error(`row ${k} is ${kindOf(row)}, not an array of numbers`);
    if (row.length !== width) throw new Error(`row ${k} has ${row.length} values, row 0 has ${width}`);
    const bad = row.findIndex((v) => typeof v !== 'number');
    if (bad >= 0) throw new Error(`row ${k} value ${bad} is ${kindOf(row[bad])}, not a number`);
  });
  const flat = new Float32Array(results.length * Math.max(width, 0));
  results.forEach((row, k) => flat.set(row as number[], k * width));
  return flat;
}

/** Splits the one input into rows of the model's width, checking name, datatype and shape. */
function toRows(inputs: readonly { name: string; datatype: string; shape: readonly number[]; data: readonly (number | boolean)[] }[], io: ModelIo | null, model: string): number[][] {
  const want = io?.inputs[0];
  if (inputs.length !== 1) throw new OipError(400, `model '${model}' takes 1 input, the request has ${inputs.length}`);
  const t = inputs[0] as (typeof inputs)[number];
  if (want !== undefined && t.name !== want.name) throw new OipError(400, `unexpected inference input '${t.name}' for model '${model}'`);
  const datatype = want?.datatype ?? 'FP32';
  if (t.datatype !== datatype) throw new OipError(400, `input '${t.name}': datatype ${t.datatype} does not match the model's ${datatype}`);
  if (want !== undefined && (t.shape.length !== want.shape.length || want.shape.some((d, i) => d !== -1 && d !== t.shape[i]))) {
    throw new OipError(400, `input '${t.name}': shape [${t.shape.join(',')}] does not match the model's [${want.shape.join(',')}]`);
  }
  const n = t.shape[0] ?? 0;
  if (n < 1) throw new OipError(400, `input '${t.name}': the batch dimension must be at least 1`);
  const width = t.data.length / n;
  const rows: number[][] = [];
  for (let k = 0; k < n; k++) rows.push(t.data.slice(k * width, (k + 1) * width) as number[]);
  return rows;
}

/** Builds the encoded response from the rows' results. */
type Finish = (results: readonly unknown[]) => EncodedResponse;

/** Submits every row; answers once all are done (the first failed row's error, else `finish`). */
function run(
  model: ServedModel, submit: NonNullable<ServedModel['submit']>, rows: number[][], arrivalMs: number,
  req: Request, res: Response, s: ModelSeries, finish: Finish,
): void {
  const requestId = randomUUID();
  res.set('x-request-id', requestId);
  traceIds.set(requestId, parseTraceparent(req.headers.traceparent));
  const name = model.config.name;
  const outcomes: (JobOutcome | undefined)[] = new Array<JobOutcome | undefined>(rows.length);
  let left = rows.length;
  let gone = false;
  let refused = false;
  res.once('close', () => { if (!res.writableFinished) gone = true; });
  const done = (): void => {
    let queueUs = 0;
    let handlerUs: number | undefined;
    for (const o of outcomes) {
      if (o === undefined) continue;
      if (o.queueUs > queueUs) queueUs = o.queueUs;
      if (o.handlerUs !== undefined && (handlerUs === undefined || o.handlerUs > handlerUs)) handlerUs = o.handlerUs;
    }
    const totalUs = (performance.now() - arrivalMs) * 1000;
    s.latencyUs.record(totalUs);
    s.queueUs.record(queueUs);
    if (res.headersSent || res.destroyed) return;
    res.setHeader('server-timing', predictionTiming(queueUs, handlerUs, totalUs));
    const failed = outcomes.find((o) => o !== undefined && o.status !== 200);
    if (failed !== undefined) {
      const b = failed.body as { message?: unknown };
      return sendOipError(res, failed.status, typeof b.message === 'string' ? b.message : `inference failed with status ${failed.status}`);
    }
    let enc: EncodedResponse;
    try {
      enc = finish(outcomes.map((o) => o?.body));
    } catch (e) {
      // A handler's answer the protocol cannot encode fails this request, not the server.
      return sendOipError(res, 500, `the handler's answer cannot be encoded: ${e instanceof Error ? e.message : String(e)}`);
    }
    const length = String(enc.body.length);
    if (enc.headerLength === null) res.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
    else res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': length, [HEADER_LENGTH]: String(enc.headerLength) });
    res.end(enc.body);
  };
  for (let k = 0; k < rows.length; k++) {
    const admitted = submit({
      requestId: rows.length === 1 ? requestId : `${requestId}-${k}`, body: rows[k], arrivalMs,
      cancelled: () => gone || refused,
      done: (o) => {
        outcomes[k] = o;
        if (--left === 0 && !refused) done();
      },
    });
    if (admitted !== 'queued') {
      refused = true;
      const why = admitted === 'closed' ? 'is being unregistered' : admitted === 'queue_full' ? 'has no room in its job queue' : 'has no worker to serve inference requests';
      return sendOipError(res, 503, `Model "${name}" ${why}`);
    }
  }
  s.requests.record(1);
}
