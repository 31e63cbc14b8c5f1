/**
 * The body of `POST /predictions/{model}`. For a built-in `onnx` model the body is decoded in
 * the frontend into the graph's named tensors and checked against its declared inputs
 * (prediction-tensors.ts: JSON arrays or objects, or a binary tensor); the batch then crosses to
 * the worker as one buffer. Any other body, and every body of a user handler, is parsed as
 * bounded JSON (json-body.ts) and reaches the handler as its parsed value.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import type { BodyLimits } from '../models/body-limits.js';
import { isBinaryTensor, SHAPE_HEADER } from './binary-tensor.js';
import { sendError } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { binaryPrediction, jsonPrediction } from './prediction-tensors.js';
import { closeIfUnread, readBody } from './read-body.js';
import type { BodyFailure } from './read-body.js';
import type { JobTensors, TensorSpec } from './tensor-spec.js';

/** A prediction's body: the checked tensors of a built-in onnx model, else the parsed JSON (undefined when empty). */
export type PredictionBody =
  | { readonly tensors: JobTensors; readonly value?: undefined }
  | { readonly tensors?: undefined; readonly value: unknown };

function refuse(req: IncomingMessage, res: ServerResponse, f: BodyFailure): void {
  closeIfUnread(req, res, f.status);
  sendError(res, f.status, f.message);
}

/**
 * Reads `req`'s body under `limits` and decodes it for `model` (`spec`: what its graph takes,
 * for a built-in onnx model); calls `done` with it, or answers the refusal (4xx) itself.
 */
export function readPredictionBody(
  req: IncomingMessage,
  res: ServerResponse,
  limits: BodyLimits,
  model: string,
  spec: TensorSpec | null,
  done: (body: PredictionBody) => void,
): void {
  readBody(req, limits, (failure, body) => {
    if (failure !== null) return refuse(req, res, failure);
    if (isBinaryTensor(req.headers['content-type'])) {
      if (spec === null) {
        return refuse(req, res, {
          status: 415,
          message: `model ${model} takes JSON bodies: binary tensors (Content-Type application/octet-stream) go to models with the built-in onnx handler`,
        });
      }
      const t = binaryPrediction(spec, body, req.headers[SHAPE_HEADER], limits);
      return 'status' in t ? refuse(req, res, t) : done({ tensors: t });
    }
    if (spec !== null && body.length > 0) {
      const t = jsonPrediction(spec, body, limits);
      return 'status' in t ? refuse(req, res, t) : done({ tensors: t });
    }
    const parsed = parseJsonBody(body, limits);
    if ('status' in parsed) return refuse(req, res, parsed);
    done({ value: parsed.value });
  });
}
