/**
 * Requests node's HTTP parser refuses before any route sees them: a malformed request line or
 * header, headers over `maxHeaderSize`, headers slower than `--header-timeout`. Answered as node's
 * own handler answers them (400, 431, 413, 408, then the connection closed), and counted in
 * `Requests4XX` and written to the access log like every other response. A connection the
 * client closed mid-request is no such refusal: nothing is answered, counted or logged here.
 */
import { randomUUID } from 'crypto';
import { STATUS_CODES } from 'http';
import type { Socket } from 'net';
import type { Duplex } from 'stream';
import type { AccessLog } from '../log/log.js';

/** The status node answers a parser error with (lib/_http_server.js, socketOnError). */
export function clientErrorStatus(code: string | undefined): number {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return 431;
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 413;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

/** node's parser error when the connection ends in the middle of a request (headers or body). */
export const PEER_CLOSED_MID_REQUEST = 'HPE_INVALID_EOF_STATE';

/** A `clientError` listener for a listener named `listener` ('inference', 'management', …). */
export function clientErrorListener(
  listener: string,
  access: AccessLog | undefined,
  count: ((status: number) => void) | undefined,
): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err, socket) => {
    const s = socket as Socket;
    // The client closed its side before its request was complete (an upload given up): there is
    // no one to answer. A request already handed to a route is logged there, with status 0; an
    // answer counted here was a Requests4XX and a second access record for a response never read.
    if (err.code === PEER_CLOSED_MID_REQUEST) {
      s.destroy();
      return;
    }
    // As node: answer only when nothing was written yet (not mid-response, not a reset peer).
    if (err.code !== 'ECONNRESET' && s.writable && s.bytesWritten === 0) {
      const status = clientErrorStatus(err.code);
      count?.(status);
      access?.({
        listener,
        port: s.localPort ?? 0,
        method: '',
        path: '',
        status,
        durationMs: 0,
        bytes: 0,
        requestId: randomUUID(),
      });
      s.write(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\n\r\n`);
    }
    s.destroy();
  };
}
