/**
 * `POST /v2/models/{m}[/versions/{v}]/infer` (the Open Inference Protocol) on node's request and
 * response, outside express, for the reason /predictions is (predictions-route.ts): express's
 * router and decoration cost more than decoding the tensor and batching it; the demo `mlp` on
 * one core answered 3,800–4,500 of these a second through express against 9,200 /predictions.
 * What the express chain did is done here in its order, with its answers: response counting,
 * the HTTP metrics under `/v2/models/{model}[/versions/{version}]/infer`, the bearer token, the
 * body header checks, a 400 for a malformed parameter, the model and version, then the body
 * under every bound of `readBody` (413 from bytes, 408 timeouts, gzip inflated) and the
 * inference. Errors are `{"error": "..."}`.
 *
 * An inference of shape [N, …] is N rows sent through the model's batcher like N /predictions
 * bodies, counted once in `ts_inference_requests_total` (one HTTP request, as /predictions
 * counts), its latency and queue time (the longest row's wait) added once.
 */
import { randomUUID } from 'crypto';
import type { IncomingMessage, ServerResponse } from 'http';
import { performance } from 'perf_hooks';
import type { JobOutcome } from '../../batching/job.js';
import { traceIds } from '../../metrics/exposition/trace-ids.js';
import { exemplarTraceId, requestSpanOf, startRequestSpan, tracingOn } from '../../tracing/request-span.js';
import type { ModelSeries } from '../../models/frontend-series.js';
import type { ModelDescription, ServedModel } from '../../models/served-model.js';
import type { OutsideRoute } from '../allowed-methods.js';
import type { FastRoute } from '../route-table.js';
import { routeTemplate } from '../http-metrics.js';
import { jsonBoundsProblem } from '../json-bounds.js';
import { float32Message } from '../json-tensor.js';
import { readBody } from '../read-body.js';
import { guarded, refuse, routeStart, servedElsewhere, seriesByVersion } from '../route-helpers.js';
import type { RouteOptions } from '../route-helpers.js';
import { predictionTiming } from '../server-timing.js';
import { modelIoOf, tensorSpecFor } from './io-cache.js';
import type { JobTensors, TensorSpec } from '../tensor-spec.js';
import { requestedOutputs, tensorJobs, tensorOutputs } from './tensor-rows.js';
import type { ModelIo } from '../../store/onnx-io.js';
import { sendOipError } from './oip-error.js';
import type { EncodedResponse, InputTensor, OutputTensor, RequestedOutput } from './tensor-codec.js';
import { datatypeMismatch, decodeInferRequest, encodeInferResponse, OipError } from './tensor-codec.js';
import { echoName } from '../../../schema/echo.js';
import { onResponseEnd } from '../response-end.js';

/** The route, as express wrote it (case-insensitive, an optional trailing slash, any query). */
const ROUTE = /^\/v2\/models\/([^/]+)(?:\/versions\/([^/]+))?\/infer\/?$/i;

/** The route's path as express writes it, and its method. */
export const OIP_INFER_ROUTE: OutsideRoute = { path: '/v2/models/:model{/versions/:version}/infer', methods: ['POST'] };

/** The `handler` label of the route's HTTP metrics (the instrumentator's template). */
export const OIP_INFER_HANDLER = routeTemplate(OIP_INFER_ROUTE.path);

/** The header giving the JSON part's length in a binary body. */
const HEADER_LENGTH = 'inference-header-content-length';

/** The route, for the inference listener's route table (which matches its method and path, and answers a throw 500). */
export function oipInferRoute(opts: RouteOptions): FastRoute {
  const seriesOf = seriesByVersion(opts.series);
  return { ...OIP_INFER_ROUTE, pattern: ROUTE, send: sendOipError, serve: route };

  function route(req: IncomingMessage, res: ServerResponse, m: RegExpExecArray): void {
    const start = routeStart(req, res, m, opts, OIP_INFER_HANDLER, sendOipError);
    if (start === null) return;
    const { name, version } = start;
    if (tracingOn()) startRequestSpan(req, res, OIP_INFER_HANDLER, performance.now(), { 'gen_ai.request.model': name });
    const model = opts.lookup(name);
    if (model === undefined) return refuse(req, res, 404, `Model not found: ${name}`, sendOipError);
    if (version !== undefined && version !== model.config.version)
      return refuse(req, res, 404, `Model version ${version} not found for model ${name}`, sendOipError);
    // Its /v2 metadata and ready answers look like any model's: say where it is served.
    if (model.submit === undefined)
      return refuse(
        req,
        res,
        400,
        `model ${name} does not serve inference requests (kind ${model.kind})${servedElsewhere(model)}`,
        sendOipError,
      );
    readBody(req, opts.limits, (failure, body) => {
      if (failure !== null) return refuse(req, res, failure.status, failure.message, sendOipError);
      // Timed from the whole body's arrival, as /predictions times its requests.
      const arrivalMs = performance.now();
      void Promise.all([modelIoOf(model), tensorSpecFor(model)]).then(([io, spec]) =>
        guarded(res, () => infer(req, res, model, version, body, io, spec, arrivalMs), sendOipError),
      );
    });
  }

  function infer(
    req: IncomingMessage,
    res: ServerResponse,
    model: ServedModel,
    version: string | undefined,
    body: Buffer,
    io: ModelIo | null,
    spec: TensorSpec | null,
    arrivalMs: number,
  ): void {
    const raw = req.headers[HEADER_LENGTH];
    const h = Array.isArray(raw) ? raw.join(', ') : raw;
    if (h !== undefined && !/^\d{1,15}$/.test(h))
      return sendOipError(res, 400, `Inference-Header-Content-Length ${JSON.stringify(h)} is not a byte count`);
    const headerLength = h === undefined ? undefined : Number(h);
    // The JSON part under the same depth and element bounds as every JSON body, before it is parsed.
    // A header length beyond the body is left to the decoder, which names it: scanning the whole
    // body then read the binary data as JSON (bytes of `[` said "nests deeper than 32 levels").
    if (headerLength === undefined || headerLength <= body.length) {
      const bounds = jsonBoundsProblem(
        body.subarray(0, headerLength ?? body.length),
        opts.limits.maxDepth,
        opts.limits.maxElements,
      );
      if (bounds !== null) return sendOipError(res, 400, bounds);
    }
    let rows: Row[];
    let outputs: readonly RequestedOutput[];
    let id: string | undefined;
    // Each row is a job in the model's queue: more rows than the queue holds could never be
    // admitted (a 503 would ask the client to retry what can only fail again), and the rows are
    // counted from the shape before any is built (a shape [9e15, 0] holds no data). Read only
    // for a request of several rows: describe() builds the model's whole worker table, and one
    // row always fits a queue (the batcher answers its 503 itself).
    let q: ModelDescription['jobQueueStatus'] | undefined;
    const queue = (): ModelDescription['jobQueueStatus'] => (q ??= model.describe().jobQueueStatus);
    const capacity = (): number => queue().remainingCapacity + queue().pendingRequests;
    try {
      const declared = (input: string): string | undefined => io?.inputs.find((t) => t.name === input)?.datatype;
      // A built-in onnx model's one FP32 input may be decoded straight into float32, and binary
      // inputs are kept as bytes; a user handler gets the JSON values as sent.
      const fast = spec !== null && spec.inputs.length === 1 && spec.inputs[0]!.dtype === 'float32';
      const r = decodeInferRequest(
        body,
        headerLength,
        fast ? opts.limits.maxElements : null,
        opts.limits.maxElements,
        declared,
        spec !== null,
      );
      id = r.id;
      if (spec !== null) {
        rows = tensorJobs(r.inputs, spec, capacity);
        outputs = requestedOutputs(spec, r.outputs, r.binaryOutput);
      } else {
        rows = toRows(r.inputs, io, model.config.name, capacity);
        const outName = io?.outputs[0]?.name ?? 'output0';
        outputs = (r.outputs ?? [{ name: outName, binary: r.binaryOutput }]).map((o) => {
          if (o.name !== outName)
            throw new OipError(400, `unexpected inference output '${o.name}' for model '${model.config.name}'`);
          return o;
        });
      }
    } catch (e) {
      if (e instanceof OipError) return sendOipError(res, e.status, e.message);
      return sendOipError(res, 500, String(e));
    }
    // All rows or none: rows queued before one is refused would hold their places (and be sent to
    // a worker) for a request already answered 503. (Through a front the table may be late: the
    // batcher's own refusal below still answers then.) One row is left to the batcher, which
    // counts its refusal where it runs (the primary); a front ships this count to it.
    if (rows.length > 1 && rows.length > queue().remainingCapacity) {
      // Counted as the batcher's own refusal is (the model's submit never saw this request).
      opts.series.queueFullRefusals(model.config.name).record(1);
      return sendOipError(res, 503, queueFullMessage(model.config.name));
    }
    run(model, rows, arrivalMs, req, res, seriesOf(model, version), (results) => {
      if (spec !== null)
        return encodeInferResponse({
          model_name: model.config.name,
          model_version: model.config.version,
          ...(id !== undefined ? { id } : {}),
          outputs: tensorOutputs(results, outputs, spec.batched),
        });
      const flat = flatRows(results);
      const width = results.length === 0 ? 0 : flat.length / results.length;
      const tensors: OutputTensor[] = outputs.map((o) => ({
        name: o.name,
        shape: [results.length, width],
        datatype: 'FP32',
        data: flat,
        binary: o.binary,
      }));
      return encodeInferResponse({
        model_name: model.config.name,
        model_version: model.config.version,
        ...(id !== undefined ? { id } : {}),
        outputs: tensors,
      });
    });
  }
}

/**
 * One job of the request: the checked tensors of a row for a built-in `onnx` model (the batch
 * then crosses to the worker as one buffer, as /predictions bodies do), else a row's values as
 * a user handler's JSON body.
 */
type Row = JobTensors | number[];

/**
 * Splits the one input into rows of the model's width, checking name, datatype and shape, and
 * that there are at most `maxRows()` (asked only of more than one row); FP32 values must be
 * finite in float32 (as /predictions refuses `1e308`), JSON or binary.
 */
function toRows(inputs: readonly InputTensor[], io: ModelIo | null, model: string, maxRows: () => number): number[][] {
  const want = io?.inputs[0];
  if (inputs.length !== 1) throw new OipError(400, `model '${model}' takes 1 input, the request has ${inputs.length}`);
  const t = inputs[0] as (typeof inputs)[number];
  if (want !== undefined && t.name !== want.name)
    throw new OipError(400, `unexpected inference input '${echoName(t.name)}' for model '${model}'`);
  const datatype = want?.datatype ?? 'FP32';
  if (t.datatype !== datatype) {
    // A model without ONNX metadata declares nothing: FP32 is what this server sends its handler.
    if (want === undefined)
      throw new OipError(
        400,
        `input '${t.name}': datatype ${t.datatype} is not taken: model '${model}' declares no inputs (no ONNX metadata), and its handler gets FP32 rows`,
      );
    throw new OipError(400, datatypeMismatch(t.name, t.datatype, datatype));
  }
  if (
    want !== undefined &&
    (t.shape.length !== want.shape.length || want.shape.some((d, i) => d !== -1 && d !== t.shape[i]))
  ) {
    throw new OipError(
      400,
      `input '${t.name}': shape [${t.shape.join(',')}] does not match the model's [${want.shape.join(',')}]`,
    );
  }
  const n = t.shape[0] ?? 0;
  if (n < 1) throw new OipError(400, `input '${t.name}': the batch dimension must be at least 1`);
  if (n > 1 && n > maxRows())
    throw new OipError(
      400,
      `the request has ${n} rows, more than model '${model}' queues at once (${maxRows()}, --job-queue-size); send at most ${maxRows()} rows a request`,
    );
  const width = t.data.length / n;
  const data = t.data as readonly number[];
  if (datatype === 'FP32') {
    // These came from JSON.parse or binary: FP32 values must be finite in float32.
    for (let k = 0; k < data.length; k++) {
      const v = data[k]!;
      if (!Number.isFinite(Math.fround(v)))
        throw new OipError(400, `input '${t.name}': ${float32Message(k, String(v))}`);
    }
  }
  const rows: number[][] = [];
  for (let k = 0; k < n; k++) rows.push(data.slice(k * width, (k + 1) * width));
  return rows;
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

/** The 503 of a request whose rows the model's queue has no room for now. */
function queueFullMessage(model: string): string {
  return `Model "${model}" has no room in its job queue`;
}

/** The 503 of a row its model did not admit (here, or at the primary for a front). */
function refusalMessage(model: string, why: NonNullable<JobOutcome['refused']>): string {
  if (why === 'queue_full') return queueFullMessage(model);
  return `Model "${model}" ${why === 'closed' ? 'is being unregistered' : 'has no worker to serve inference requests'}`;
}

/** Builds the encoded response from the rows' results. */
type Finish = (results: readonly unknown[]) => EncodedResponse;

/** Submits every row; answers once all are done (the first failed row's error, else `finish`). */
function run(
  model: ServedModel,
  rows: readonly Row[],
  arrivalMs: number,
  req: IncomingMessage,
  res: ServerResponse,
  s: ModelSeries,
  finish: Finish,
): void {
  const requestId = randomUUID();
  res.setHeader('x-request-id', requestId);
  const span = requestSpanOf(req);
  span?.set({ 'gen_ai.request.id': requestId });
  const trace = exemplarTraceId(req, span);
  traceIds.set(requestId, trace);
  // The rows travel as jobs `<id>-<k>`: their metrics' exemplars look the trace up by those ids.
  if (trace !== undefined && rows.length > 1)
    for (let k = 0; k < rows.length; k++) traceIds.set(`${requestId}-${k}`, trace);
  const name = model.config.name;
  const outcomes: (JobOutcome | undefined)[] = new Array<JobOutcome | undefined>(rows.length);
  let left = rows.length;
  let gone = false;
  let refused = false;
  onResponseEnd(res, (finished) => {
    if (!finished && !res.writableFinished) gone = true;
  });
  // A front's proxy: the primary admits each row, and says so with its outcome.
  const relayed = model.admitsRemotely === true;
  const done = (): void => {
    if (relayed) s.requests.record(1);
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
      return sendOipError(
        res,
        failed.status,
        typeof b.message === 'string' ? b.message : `inference failed with status ${failed.status}`,
      );
    }
    let enc: EncodedResponse;
    try {
      enc = finish(outcomes.map((o) => o?.body));
    } catch (e) {
      // A handler's answer the protocol cannot encode fails this request, not the server.
      return sendOipError(
        res,
        500,
        `the handler's answer cannot be encoded: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    const length = String(enc.length);
    if (enc.headerLength === null) res.writeHead(200, { 'content-type': 'application/json', 'content-length': length });
    else
      res.writeHead(200, {
        'content-type': 'application/octet-stream',
        'content-length': length,
        [HEADER_LENGTH]: String(enc.headerLength),
      });
    const last = enc.parts.length - 1;
    for (let i = 0; i < last; i++) res.write(enc.parts[i]);
    res.end(enc.parts[last]);
  };
  for (let k = 0; k < rows.length; k++) {
    const row = rows[k]!;
    const admitted = model.submit!({
      requestId: rows.length === 1 ? requestId : `${requestId}-${k}`,
      arrivalMs,
      ...(Array.isArray(row) ? { body: row } : { body: undefined, ...row }),
      cancelled: () => gone || refused,
      done: (o) => {
        outcomes[k] = o;
        // Each row is a job of its own: its queue, batch and handler spans.
        if (o.refused === undefined) span?.batched(arrivalMs, o.queueUs, o.handlerUs, performance.now());
        if (o.refused !== undefined && !refused) {
          // The primary refused this row: the others are dropped (cancelled) and the answer is ours.
          refused = true;
          if (!res.headersSent && !res.destroyed) sendOipError(res, 503, refusalMessage(name, o.refused));
        }
        if (--left === 0 && !refused) done();
      },
    });
    if (admitted !== 'queued') {
      refused = true;
      return sendOipError(res, 503, refusalMessage(name, admitted));
    }
  }
  if (!relayed) s.requests.record(1);
}
