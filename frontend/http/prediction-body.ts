/**
 * The body of `POST /predictions/{model}`. For a model whose worker takes tensors (the built-in
 * `onnx` handler) the body is decoded in the frontend straight into a Float32Array — a JSON
 * number array (json-tensor.ts) or a binary tensor (binary-tensor.ts) — and float32 overflow is
 * refused here (400); the batch then crosses to the worker as one buffer. Any other body, and
 * every body of a user handler, is parsed as bounded JSON (json-body.ts) and reaches the
 * handler as its parsed value.
 */
import type { Request, RequestHandler } from 'express';
import type { BodyLimits } from './body-limits.js';
import { decodeBinaryTensor, isBinaryTensor, shapeSize, SHAPE_HEADER } from './binary-tensor.js';
import { parseJsonBody, refuseBody } from './json-body.js';
import { decodeJsonTensor } from './json-tensor.js';
import { readBody } from './read-body.js';

const TENSOR = Symbol('tensor');
type WithTensor = Request & { [TENSOR]?: Float32Array };

/** The request's decoded float32 input, when the body was decoded as a tensor. */
export function tensorOf(req: Request): Float32Array | undefined {
  return (req as WithTensor)[TENSOR];
}

/** What the middleware needs to know about the model a request names. */
export interface PredictionBodyOptions {
  readonly limits: BodyLimits;
  /** True when the model's worker takes float32 tensors (`handler: onnx`); false for unknown models. */
  readonly takesTensors: (modelName: string) => boolean;
}

/** Middleware: `tensorOf(req)` for tensor models' number bodies, else `req.body` as parsed JSON. */
export function predictionBody(opts: PredictionBodyOptions): RequestHandler {
  const limits = opts.limits;
  return (req, res, next) => {
    readBody(req, limits, (failure, body) => {
      if (failure !== null) return refuseBody(req, res, failure);
      const tensors = opts.takesTensors(String(req.params.model));
      if (isBinaryTensor(req.headers['content-type'])) {
        if (!tensors) {
          return refuseBody(req, res, { status: 415, message: `model ${String(req.params.model)} takes JSON bodies: binary tensors (Content-Type application/octet-stream) go to models with the built-in onnx handler` });
        }
        const header = req.headers[SHAPE_HEADER];
        const size = shapeSize(header, limits.maxElements);
        if (typeof size !== 'number') return refuseBody(req, res, size);
        const data = decodeBinaryTensor(body, String(header), size);
        if (!(data instanceof Float32Array)) return refuseBody(req, res, data);
        (req as WithTensor)[TENSOR] = data;
        return next();
      }
      if (tensors && body.length > 0) {
        const t = decodeJsonTensor(body, limits.maxElements);
        if (t.kind === 'error') return refuseBody(req, res, { status: 400, message: t.message });
        if (t.kind === 'tensor') {
          (req as WithTensor)[TENSOR] = t.data;
          return next();
        }
      }
      const parsed = parseJsonBody(body, limits);
      if ('status' in parsed) return refuseBody(req, res, parsed);
      req.body = parsed.value;
      next();
    });
  };
}
