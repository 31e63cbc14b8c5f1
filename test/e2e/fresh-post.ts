/**
 * One POST of a JSON body to `/predictions/mlp` on a fresh connection, for tests that end or hang
 * a front process under load: resolves to the status, or to how the request ended without one
 * (ECONNRESET, TIMEOUT after 10 s, another socket error code). Never rejects.
 */
import * as http from 'node:http';

export function freshPost(inference: string, body: string): Promise<string> {
  const u = new URL(inference);
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: '/predictions/mlp',
        method: 'POST',
        agent: false,
        timeout: 10_000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(String(res.statusCode)));
        res.on('error', () => resolve('ECONNRESET'));
      },
    );
    req.on('timeout', () => {
      req.destroy();
      resolve('TIMEOUT');
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    req.end(body);
  });
}
