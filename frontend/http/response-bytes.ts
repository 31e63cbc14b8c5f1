/**
 * Body bytes written on a response, counted as they are written (a streamed answer has no
 * Content-Length, and headers given to writeHead() are invisible to getHeader()). One counter
 * per response, however many readers (access log, HTTP metrics): write/end are wrapped once.
 */
import type { ServerResponse } from 'http';

/** A response's running body-byte count. */
export interface ResponseBytes {
  readonly bytes: number;
}

const COUNTERS = new WeakMap<ServerResponse, { bytes: number }>();

function byteLength(chunk: unknown, encoding: unknown): number {
  if (typeof chunk === 'string')
    return Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  if (chunk instanceof Uint8Array) return chunk.byteLength;
  return 0;
}

/** The byte counter of `res`, wrapping its write/end on the first call only. */
export function responseBytes(res: ServerResponse): ResponseBytes {
  const found = COUNTERS.get(res);
  if (found !== undefined) return found;
  const counter = { bytes: 0 };
  COUNTERS.set(res, counter);
  const write = res.write.bind(res) as (...a: unknown[]) => boolean;
  const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
  res.write = function (chunk: unknown, ...rest: unknown[]) {
    counter.bytes += byteLength(chunk, rest[0]);
    return write(chunk, ...rest);
  } as ServerResponse['write'];
  res.end = function (...args: unknown[]) {
    if (args.length > 0 && typeof args[0] !== 'function') counter.bytes += byteLength(args[0], args[1]);
    return end(...args);
  } as ServerResponse['end'];
  return counter;
}
