/**
 * `Expect: 100-continue` (curl sends it for bodies over 1 MiB). Left to itself node answers
 * 100 Continue as soon as the headers arrive, so a request refused from its headers alone (a
 * 404 for an unknown model, a 413 from Content-Length, a 415) made the client upload the whole
 * body first, up to the drain limit, only to be thrown away. Here the 100 goes out when a route
 * starts reading the body (`readBody`, after its header checks), and a request refused before
 * that never gets it: its client sends no body and the connection is closed after the answer.
 */
import type { IncomingMessage, Server, ServerResponse } from 'http';

const withheld = new WeakMap<IncomingMessage, ServerResponse>();

/** Makes `server` hold each 100 Continue until `sendContinue` (its 'request' listeners still run). */
export function deferContinue(server: Server): void {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    withheld.set(req, res);
    server.emit('request', req, res);
  });
}

/** Sends `req`'s held 100 Continue, if it has one (once): its route is about to read the body. */
export function sendContinue(req: IncomingMessage): void {
  const res = withheld.get(req);
  if (res === undefined) return;
  withheld.delete(req);
  if (!res.headersSent) res.writeContinue();
}

/** Whether `req` was answered without its 100 Continue: its body may never come. */
export function continueWithheld(req: IncomingMessage): boolean {
  return withheld.has(req);
}
