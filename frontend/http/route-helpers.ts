/**
 * What the routes served outside express (predictions-route.ts, oip/infer-route.ts) share with
 * each other: reading a target's path as express would, decoding a path parameter as express
 * does, and the 500 that express's error handler gave a route that threw.
 */
import type { ServerResponse } from 'http';
import { sendError } from './errors.js';

/**
 * The path of a request target: origin-form (`/predictions/mlp?x=1`) without its query, or the
 * path of an absolute-form one (`http://host/predictions/mlp`), which HTTP/1.1 servers must take.
 */
export function pathOf(url: string): string {
  if (url.charCodeAt(0) !== 47 /* / */) {
    try {
      return new URL(url).pathname;
    } catch {
      return '';
    }
  }
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/** A path segment decoded as express decodes a route parameter; null when it is malformed. */
export function decodeParam(s: string): string | null {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

/**
 * Runs `fn`, answering 500 with the error's message (in the route's error shape, `send`) if it
 * throws, as express's error handler did: outside express nothing else would catch it, and a
 * throw in a request listener or a body callback ends the process.
 */
export function guarded(res: ServerResponse, fn: () => void, send: (res: ServerResponse, status: number, message: string) => void = sendError): void {
  try {
    fn();
  } catch (e) {
    send(res, 500, e instanceof Error ? e.message : String(e));
  }
}
