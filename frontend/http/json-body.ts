/**
 * A lean JSON body reader for the prediction hot path (express.json's chain — content-type
 * negotiation, iconv, raw-body — costs more than the parse itself). Every body is JSON
 * whatever its content type; over `limit` bytes → 413, invalid JSON → 400, none → undefined.
 */
import type { RequestHandler } from 'express';
import { sendError } from './errors.js';

/** Middleware setting `req.body` to the parsed JSON body (undefined when there is none). */
export function jsonBody(limit: number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    if (declared > limit) {
      req.resume(); // drain, so the connection can be reused for the 413
      return sendError(res, 413, `request body exceeds the limit of ${limit} bytes (--max-request-size)`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        chunks.length = 0;
        sendError(res, 413, `request body exceeds the limit of ${limit} bytes (--max-request-size)`);
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => { failed = true; });
    req.on('end', () => {
      if (failed) return;
      if (size === 0) { req.body = undefined; return next(); }
      const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)).toString('utf8');
      try {
        req.body = JSON.parse(text) as unknown;
      } catch (e) {
        return sendError(res, 400, `invalid JSON body: ${(e as Error).message}`);
      }
      next();
    });
  };
}
