/**
 * The HTTP floor of `frontend_cpu_per_request_vs_http_floor`: a bare `node:http` server in its
 * own process that reads each POST body whole (as the frontend must before it can batch it) and
 * answers a fixed JSON array of 10 numbers (the demo mlp's answer size). What any Node frontend
 * pays per request before it does anything of its own: HTTP parsing, the socket reads and writes,
 * the event loop. `node dist/tools/bench/http-floor.js serve` runs the server (it prints its port);
 * `serve decode` also decodes each body with tsserve's JSON tensor decoder (the next rung of
 * tools/bench/frontend-ladder.ts: the floor plus the one decoding any tensor frontend must do).
 */
import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as http from 'node:http';
import { decodeJsonTensor } from '../../frontend/http/json-tensor.js';

/** What the floor server does with a body: read it only, or also decode it as a JSON tensor. */
export type FloorMode = 'bare' | 'decode';

const ANSWER = JSON.stringify(Array.from({ length: 10 }, (_v, i) => i / 10 + 0.0123456));

/** A running floor server: its process and URL. */
export interface FloorServer {
  readonly proc: ChildProcess;
  readonly url: string;
  stop(): Promise<void>;
}

/** Forks the floor server (`mode`, default bare) and resolves once it listens on a free loopback port. */
export function startHttpFloor(mode: FloorMode = 'bare'): Promise<FloorServer> {
  const proc = fork(import.meta.filename, ['serve', mode], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`http floor server exited (code ${String(code)})`)));
    proc.once('message', (m: unknown) => {
      const port = (m as { port?: unknown }).port;
      if (typeof port !== 'number') return reject(new Error('http floor server sent no port'));
      resolve({
        proc,
        url: `http://127.0.0.1:${port}/predictions/mlp`,
        stop: () =>
          new Promise<void>((done) => {
            proc.removeAllListeners('exit');
            proc.once('exit', () => done());
            proc.kill('SIGTERM');
          }),
      });
    });
  });
}

function serve(decode: boolean): void {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      const ok = body.length > 0 && (!decode || decodeJsonTensor(body, 1 << 20).kind === 'tensor');
      res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' });
      res.end(ANSWER);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.send?.({ port: (server.address() as { port: number }).port });
  });
  process.on('SIGTERM', () => process.exit(0));
}

if (process.argv[1] === import.meta.filename && process.argv[2] === 'serve') serve(process.argv[3] === 'decode');
