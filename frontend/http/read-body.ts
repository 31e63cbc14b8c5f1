/**
 * Reads one request body under `BodyLimits`: 415 for a `Content-Encoding` other than identity
 * or gzip, 413 from `Content-Length` before a byte is read and from the bytes read (a gzip body
 * counts once inflated too), 408 when the body takes longer than the request timeout or stalls
 * longer than the idle timeout. An early answer closes the connection, so the unread rest of a
 * body is never taken for the next request.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import * as zlib from 'zlib';
import type { BodyLimits } from '../models/body-limits.js';
import { continueWithheld, sendContinue } from './expect-continue.js';

/** Why a body was refused: the HTTP status and the message to answer. */
export interface BodyFailure {
  readonly status: number;
  readonly message: string;
}

/** Called once: a failure, or the (inflated) body, empty when there was none. */
export type BodyCallback = (failure: BodyFailure | null, body: Buffer) => void;

const EMPTY = Buffer.alloc(0);

function tooLarge(limit: number, inflated: boolean): BodyFailure {
  return {
    status: 413,
    message: `${inflated ? 'inflated request body' : 'request body'} exceeds the limit of ${limit} bytes (--max-request-size)`,
  };
}

/** `gzip`, `identity`, or the failure for an encoding we do not take. */
function encodingOf(req: IncomingMessage): 'gzip' | 'identity' | BodyFailure {
  const raw = req.headers['content-encoding'];
  if (raw === undefined) return 'identity';
  const v = raw.trim().toLowerCase();
  if (v === '' || v === 'identity') return 'identity';
  if (v === 'gzip' || v === 'x-gzip') return 'gzip';
  return { status: 415, message: `unsupported Content-Encoding "${raw}" (send identity or gzip)` };
}

/** The checks decided from the headers alone (415, 413 from Content-Length), or null. */
export function checkBodyHeaders(req: IncomingMessage, limits: BodyLimits): BodyFailure | null {
  const enc = encodingOf(req);
  if (typeof enc === 'object') return enc;
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (declared > limits.maxBytes) return tooLarge(limits.maxBytes, false);
  return null;
}

/** Largest declared body a refused request still has drained after its answer (16 MiB). */
export const DRAIN_MAX_BYTES = 16 * 1024 * 1024;

/**
 * Settles the unread rest of a refused body. A declared length up to DRAIN_MAX_BYTES is read
 * and dropped after the answer, so a client still sending (fetch, curl) gets to read its 4xx
 * instead of EPIPE, and the connection stays usable. Anything larger or of unknown length
 * (chunked, stalled) makes the answer the connection's last: the rest is never read, and never
 * parsed as the next request.
 */
export function closeIfUnread(req: IncomingMessage, res: ServerResponse, status: number): void {
  if (req.complete || res.headersSent) return;
  // Refused before its 100 Continue: the client may never send the body, so do not wait for it.
  if (continueWithheld(req)) {
    res.setHeader('connection', 'close');
    return;
  }
  // A body refused for being slow (408) is never waited for.
  const declared = Number(req.headers['content-length'] ?? Number.NaN);
  if (
    status !== 408 &&
    req.headers['transfer-encoding'] === undefined &&
    Number.isFinite(declared) &&
    declared <= DRAIN_MAX_BYTES &&
    !req.readableEnded &&
    req.listenerCount('data') === 0
  ) {
    req.resume();
    return;
  }
  res.setHeader('connection', 'close');
}

/** Whether `req` has a body (declared by Content-Length above 0 or Transfer-Encoding) not read to its end. */
export function bodyUnread(req: IncomingMessage): boolean {
  if (req.complete || req.readableEnded) return false;
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const declared = req.headers['content-length'];
  return declared !== undefined && Number(declared) !== 0;
}

/**
 * Makes the answer to a request refused before its body is read the connection's last, when it
 * has a body: none of it is read (node would otherwise read it all to reuse the connection),
 * and a withheld 100 Continue is never sent. For callers that must not spend reads on a body,
 * such as a request without the bearer key.
 */
export function closeWithoutReading(req: IncomingMessage, res: ServerResponse): void {
  if (!res.headersSent && bodyUnread(req)) res.setHeader('connection', 'close');
}

/** Reads `req`'s body under `limits` and calls `done` exactly once. */
export function readBody(req: IncomingMessage, limits: BodyLimits, done: BodyCallback): void {
  const early = checkBodyHeaders(req, limits);
  if (early !== null) return done(early, EMPTY);
  sendContinue(req);
  const gzip = encodingOf(req) === 'gzip';
  const chunks: Buffer[] = [];
  let size = 0;
  let settled = false;
  const startMs = Date.now();
  let lastMs = startMs;
  let timer: NodeJS.Timeout | null = null;
  const finish = (failure: BodyFailure | null, body: Buffer): void => {
    if (settled) return;
    settled = true;
    if (timer !== null) clearTimeout(timer);
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('error', onError);
    if (failure !== null) chunks.length = 0;
    done(failure, body);
  };
  // One timer per body: it re-arms for whichever deadline (whole body, idle gap) comes first.
  const check = (): void => {
    timer = null;
    const now = Date.now();
    if (now - startMs >= limits.timeoutMs) {
      return finish(
        { status: 408, message: `request body not received within ${limits.timeoutMs} ms (--request-timeout)` },
        EMPTY,
      );
    }
    if (now - lastMs >= limits.idleTimeoutMs) {
      return finish(
        { status: 408, message: `no request body bytes for ${limits.idleTimeoutMs} ms (--request-idle-timeout)` },
        EMPTY,
      );
    }
    arm(now);
  };
  const arm = (now: number): void => {
    const wait = Math.min(startMs + limits.timeoutMs, lastMs + limits.idleTimeoutMs) - now;
    timer = setTimeout(check, Math.max(1, wait));
    timer.unref();
  };
  const onData = (c: Buffer): void => {
    size += c.length;
    lastMs = Date.now();
    if (size > limits.maxBytes) return finish(tooLarge(limits.maxBytes, false), EMPTY);
    chunks.push(c);
  };
  const onEnd = (): void => {
    const body = size === 0 ? EMPTY : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
    if (!gzip || size === 0) return finish(null, body);
    zlib.gunzip(body, { maxOutputLength: limits.maxBytes }, (err, out) => {
      if (err === null) return finish(null, out);
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        return finish(tooLarge(limits.maxBytes, true), EMPTY);
      finish({ status: 400, message: `invalid gzip body: ${err.message}` }, EMPTY);
    });
  };
  const onError = (): void => finish({ status: 400, message: 'request body aborted by the client' }, EMPTY);
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', onError);
  arm(startMs);
}
