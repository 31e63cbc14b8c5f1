/**
 * A lean JSON body reader (express.json's chain — content-type negotiation, iconv, raw-body —
 * costs more than the parse itself, and reads a too-large body to its end before its 413).
 * Every body is JSON whatever its content type. The body is read under `BodyLimits`
 * (read-body.ts: 413, 415, 408), bounded in depth and elements before it is parsed (400), and
 * invalid JSON is a 400; none → `req.body` undefined.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { BodyLimits } from '../models/body-limits.js';
import { bodyLimits } from '../models/body-limits.js';
import { sendError } from './errors.js';
import { jsonBoundsProblem } from './json-bounds.js';
import { jsonErrorReason } from './json-error.js';
import type { BodyFailure } from './read-body.js';
import { closeIfUnread, readBody } from './read-body.js';

/** How a refused body is answered (TorchServe's `{code, type, message}` by default). */
export type BodyErrorSender = (res: Response, status: number, message: string) => void;

/** Parses a body read under `limits`: the value (undefined when empty), or why not. */
export function parseJsonBody(body: Buffer, limits: BodyLimits): { readonly value: unknown } | BodyFailure {
  if (body.length === 0) return { value: undefined };
  const problem = jsonBoundsProblem(body, limits.maxDepth, limits.maxElements);
  if (problem !== null) return { status: 400, message: problem };
  try {
    return { value: JSON.parse(body.toString('utf8')) as unknown };
  } catch (e) {
    return { status: 400, message: `invalid JSON body: ${jsonErrorReason(e)}` };
  }
}

/** Answers a refused body, closing the connection when the body was not read to its end. */
export function refuseBody(req: Request, res: Response, f: BodyFailure, send: BodyErrorSender = sendError): void {
  closeIfUnread(req, res, f.status);
  send(res, f.status, f.message);
}

/**
 * Middleware setting `req.body` to the parsed JSON body (undefined when there is none).
 * `limits`: a byte limit alone, or the bounds (each defaulting to DEFAULT_BODY_LIMITS).
 */
export function jsonBody(limits?: number | Partial<BodyLimits>, send: BodyErrorSender = sendError): RequestHandler {
  const l = bodyLimits(limits);
  return (req, res, next) => {
    readBody(req, l, (failure, body) => {
      if (failure !== null) return refuseBody(req, res, failure, send);
      const parsed = parseJsonBody(body, l);
      if ('status' in parsed) return refuseBody(req, res, parsed, send);
      req.body = parsed.value;
      next();
    });
  };
}
