/**
 * The body of `POST /predictions/{model}`. For a model whose worker takes tensors (the built-in
 * `onnx` handler) the body is decoded in the frontend straight into a Float32Array — a JSON
 * number array (json-tensor.ts) or a binary tensor (binary-tensor.ts) — and float32 overflow is
 * refused here (400); the batch then crosses to the worker as one buffer. Any other body, and
 * every body of a user handler, is parsed as bounded JSON (json-body.ts) and reaches the
 * handler as its parsed value.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import type { BodyLimits } from '../models/body-limits.js';
import { decodeBinaryTensor, isBinaryTensor, shapeSize, SHAPE_HEADER } from './binary-tensor.js';
import { sendError } from './errors.js';
import { parseJsonBody } from './json-body.js';
import { decodeJsonTensor } from './json-tensor.js';
import { closeIfUnread, readBody } from './read-body.js';
import type { BodyFailure } from './read-body.js';

/** A prediction's body: a float32 tensor for a tensor model, else the parsed JSON (undefined when empty). */
export type PredictionBody =
  | { readonly input: Float32Array; readonly value?: undefined }
  | { readonly input?: undefined; readonly value: unknown };

function refuse(req: IncomingMessage, res: ServerResponse, f: BodyFailure): void {
  closeIfUnread(req, res, f.status);
  sendError(res, f.status, f.message);
}

/**
 * Reads `req`'s body under `limits` and decodes it for `model` (`tensors`: its worker takes
 * float32 tensors); calls `done` with it, or answers the refusal (4xx) itself.
 */
export function readPredictionBody(
  req: IncomingMessage,
  res: ServerResponse,
  limits: BodyLimits,
  model: string,
  tensors: boolean,
  done: (body: PredictionBody) => void,
): void {
  readBody(req, limits, (failure, body) => {
    if (failure !== null) return refuse(req, res, failure);
    if (isBinaryTensor(req.headers['content-type'])) {
      if (!tensors) {
        return refuse(req, res, {
          status: 415,
          message: `model ${model} takes JSON bodies: binary tensors (Content-Type application/octet-stream) go to models with the built-in onnx handler`,
        });
      }
      const header = req.headers[SHAPE_HEADER];
      const size = shapeSize(header, limits.maxElements);
      if (typeof size !== 'number') return refuse(req, res, size);
      const data = decodeBinaryTensor(body, String(header), size);
      if (!(data instanceof Float32Array)) return refuse(req, res, data);
      return done({ input: data });
    }
    if (tensors && body.length > 0) {
      const t = decodeJsonTensor(body, limits.maxElements);
      if (t.kind === 'error') return refuse(req, res, { status: 400, message: t.message });
      if (t.kind === 'tensor') return done({ input: t.data });
    }
    const parsed = parseJsonBody(body, limits);
    if ('status' in parsed) return refuse(req, res, parsed);
    done({ value: parsed.value });
  });
}
