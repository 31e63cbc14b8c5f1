/**
 * One HTTP/1.1 exchange on a raw socket, for what fetch cannot do or show: a head sent without
 * its body, whether a 100 Continue came, a client that half-closes after its request, and the
 * server closing the connection. The wait ends when the server ends its side.
 */
import * as net from 'net';

/** What to send: the request bytes, and what to do next. */
export interface RawRequest {
  /** The request as sent first (head, and any body bytes). */
  readonly send: string | Buffer;
  /** Sent once `HTTP/1.1 100 Continue` arrives (the body a client holds back for it). */
  readonly afterContinue?: string | Buffer;
  /** Half-close (FIN, `shutdown(SHUT_WR)`) right after `send`, as curl and some proxies do. */
  readonly halfClose?: boolean;
}

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';

/** Every byte the server sent on one connection to `url`'s host, once the server ended it. */
export function rawExchange(url: string, req: RawRequest): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect({ port: Number(port), host: hostname, allowHalfOpen: true });
    let got = Buffer.alloc(0);
    let continued = false;
    s.on('error', reject);
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (!continued && req.afterContinue !== undefined && got.toString('latin1', 0, CONTINUE.length) === CONTINUE) {
        continued = true;
        s.write(req.afterContinue);
      }
    });
    s.on('end', () => {
      s.destroy();
      resolve(got.toString('utf8'));
    });
    s.write(req.send);
    if (req.halfClose === true) s.end();
  });
}

/** `text`'s answers without their `date:` headers (the one part that changes). */
export function withoutDate(text: string): string {
  return text.replace(/\r\ndate: [^\r]*/gi, '');
}
