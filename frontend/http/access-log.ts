/**
 * The access log: one record per HTTP response on a listener (inference, management or
 * metrics), with method, path, status, duration, body bytes and request id, as TorchServe's
 * access_log.log has. It is a `request` listener on the node server placed before the app, so
 * it sees every request, including those express answers synchronously.
 */
import { randomUUID } from 'crypto';
import type { IncomingMessage, ServerResponse } from 'http';
import { performance } from 'perf_hooks';
import type { AccessLog } from '../log/log.js';
import { responseBytes } from './response-bytes.js';
import { onResponseEnd } from './response-end.js';

/** The `x-request-id` of writeHead's headers (an object or a flat [name, value, ...] array). */
function requestIdOf(headers: object): string | undefined {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2)
      if (String(headers[i]).toLowerCase() === 'x-request-id') return String(headers[i + 1]);
    return undefined;
  }
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === 'x-request-id') return String(v);
  return undefined;
}

/**
 * A `request` listener writing one access record per response: on 'finish', or on 'close'
 * when the response never finished (client gone; status 0 when no header was sent). The
 * request id is the `x-request-id` the app answered (the inference path's), else a fresh one.
 */
export function accessLogListener(
  listener: string,
  access: AccessLog,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const t0 = performance.now();
    // Read now: once the client has gone the socket is destroyed and has no local port.
    const port = req.socket.localPort ?? 0;
    const written = responseBytes(res);
    // Headers passed to writeHead() are not visible to getHeader() when none was set before:
    // take the id from them too. One set before (the inference path's) is what getHeader()
    // reads at the end, a writeHead() value for it included (node merges them), so then the
    // headers are not searched.
    let answeredId: string | undefined;
    const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => ServerResponse;
    res.writeHead = function (...args: unknown[]) {
      if (!res.hasHeader('x-request-id')) {
        const headers = args.find((a) => typeof a === 'object' && a !== null);
        if (headers !== undefined) answeredId = requestIdOf(headers);
      }
      return writeHead(...args);
    } as ServerResponse['writeHead'];
    onResponseEnd(res, () => {
      const id = res.getHeader('x-request-id') ?? answeredId;
      access({
        listener,
        port,
        method: req.method ?? '',
        path: req.url ?? '',
        status: res.headersSent ? res.statusCode : 0,
        durationMs: Math.round((performance.now() - t0) * 1000) / 1000,
        bytes: written.bytes,
        requestId: typeof id === 'string' ? id : randomUUID(),
      });
    });
  };
}
