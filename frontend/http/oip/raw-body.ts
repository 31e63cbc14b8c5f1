/**
 * A lean raw body reader for the inference route (express.raw's chain — type negotiation,
 * raw-body, iconv — costs more than the decode): `req.body` becomes the body's bytes, over
 * `limit` bytes → 413 in the protocol's `{"error"}` shape.
 */
import type { RequestHandler } from 'express';

/** Middleware setting `req.body` to a Buffer of the whole body (empty when there is none). */
export function rawBody(limit: number): RequestHandler {
  return (req, res, next) => {
    const tooLarge = (): void => {
      if (!res.headersSent) res.status(413).json({ error: `request body exceeds the limit of ${limit} bytes (--max-request-size)` });
    };
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      req.resume(); // drain, so the connection can be reused for the 413
      return tooLarge();
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
        tooLarge();
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => { failed = true; });
    req.on('end', () => {
      if (failed) return;
      req.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      next();
    });
  };
}
