/** The Open Inference Protocol's error answer, on node's response (inside or outside express). */
import type { ServerResponse } from 'http';

/**
 * Sends `{"error": message}` with `status`, with the headers and bytes express's
 * `res.status().json()` wrote, so the routes outside express answer the same.
 */
export function sendOipError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) return;
  const body = JSON.stringify({ error: message });
  res.statusCode = status;
  res.setHeader('content-type', 'application/json; charset=utf-8');
  res.setHeader('content-length', Buffer.byteLength(body));
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}
