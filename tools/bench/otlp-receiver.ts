/**
 * An OTLP/HTTP receiver for the benchmarks: it reads each body and answers 200, which is what a
 * collector costs the sender (nothing is decoded; the e2e tests decode in test/e2e/otlp-receiver.ts).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening receiver: its URL (ending in `signalPath`), the bodies it took, and how to close it. */
export interface BenchReceiver {
  readonly url: string;
  readonly bodies: () => number;
  readonly close: () => Promise<void>;
}

/** Listens on a free loopback port; `signalPath` is `/v1/metrics` or `/v1/traces`. */
export async function otlpReceiver(signalPath: string): Promise<BenchReceiver> {
  let n = 0;
  const server = http.createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      n++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${signalPath}`,
    bodies: () => n,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
