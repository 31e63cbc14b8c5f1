/** JSON error answers in TorchServe's shape `{code, type, message}`, and the express fallbacks. */
import type { ServerResponse } from 'http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { capMessage } from '../../schema/echo.js';

/** TorchServe's exception names by status. */
const TYPES: Readonly<Record<number, string>> = {
  400: 'BadRequestException',
  401: 'InvalidKeyException',
  404: 'ResourceNotFoundException',
  405: 'MethodNotAllowedException',
  408: 'RequestTimeoutException',
  409: 'ConflictStatusException',
  413: 'RequestEntityTooLargeException',
  415: 'UnsupportedMediaTypeException',
  // TorchServe has no 429; the status page's data route (its only one here) says what it is.
  429: 'TooManyRequestsException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
  504: 'RequestTimeoutException',
};

/**
 * Sends `{code, type, message}` with `status`, as express's `res.status().json()` would (the
 * same headers and bytes) but on node's response, so the routes outside express use it too.
 */
export function sendError(res: ServerResponse, status: number, message: string, type?: string): void {
  sendJson(res, status, {
    code: status,
    type: type ?? TYPES[status] ?? 'InternalServerException',
    message: capMessage(message),
  });
}

/**
 * Sends `value` as JSON with `status`, with the headers and bytes express's `res.status().json()`
 * writes (no body to a HEAD); a no-op once the headers are out. Every API's error shape goes
 * through it on node's response.
 */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  if (res.headersSent) return;
  const body = JSON.stringify(value);
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}

/** 404 for every path no route took (TorchServe's wording). */
export const notFound: RequestHandler = (_req, res) => {
  sendError(res, 404, 'Requested resource is not found, please refer to API document.');
};

interface BodyParserError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  limit?: number;
}

/** Maps body-parser and handler errors to JSON: bad JSON 400, too large 413, else 500. */
export const errorHandler: ErrorRequestHandler = (err: unknown, _req, res, _next) => {
  const e = (typeof err === 'object' && err !== null ? err : {}) as BodyParserError;
  if (e.type === 'entity.too.large')
    return sendError(res, 413, `request body exceeds the limit of ${String(e.limit)} bytes (--max-request-size)`);
  if (e.type === 'entity.parse.failed') return sendError(res, 400, `invalid JSON body: ${e.message ?? ''}`);
  const status = e.status ?? e.statusCode ?? 500;
  if (status >= 400 && status < 500) return sendError(res, status, e.message ?? 'bad request');
  return sendError(res, 500, e.message ?? String(err));
};
