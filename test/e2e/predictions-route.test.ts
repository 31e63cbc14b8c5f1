/**
 * `POST /predictions/{model}[/{version}]` is served on node's request outside express
 * (frontend/http/predictions-route.ts). Against the real server with token auth on: the
 * route's edges answer exactly as the express chain did — the token first, then the body's
 * headers, then a malformed parameter, all under `handler="none"`; case, a trailing slash and
 * a query string still match; PUT is served as POST (TorchServe's `curl -T`); any other method
 * falls through to express's 405 (Allow: POST, PUT) — and every
 * answer counts once in Requests2XX/4XX and in http_requests_total under its handler. One
 * difference on purpose: an absolute-form request target (`POST http://host/predictions/mlp`,
 * which HTTP/1.1 servers must take) is served; express answered it 404.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import { delta, Scrape } from './generation-helpers.js';
import { generateStore, mlpInput, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';

const ROUTE = '/predictions/{model}[/{version}]';

describe('the /predictions route outside express (real tsserve start, token auth on)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let key = '';

  before(async () => {
    const logDir = tempDir('route-logs');
    server = await startTsserve({
      store: generateStore(['mlp']),
      logDir,
      args: [
        '--enable-token-auth',
        '--metrics-mode',
        'prometheus',
        '--disable-system-metrics',
        '--max-request-size',
        '100000',
      ],
    });
    key = (JSON.parse(fs.readFileSync(path.join(logDir, 'key_file.json'), 'utf8')) as { inference: { key: string } })
      .inference.key;
  });

  after(async () => {
    await server.stop('SIGTERM');
    removeStores();
  });

  async function send(
    url: string,
    init: RequestInit & { auth?: boolean } = {},
  ): Promise<{ status: number; body: unknown }> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...(init.auth === false ? {} : { authorization: `Bearer ${key}` }),
      ...(init.headers as Record<string, string> | undefined),
    };
    const res = await fetch(`${server.inference}${url}`, {
      method: 'POST',
      body: JSON.stringify(mlpInput(3)),
      ...init,
      headers,
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
  }

  /** One request on a fresh connection, as written; the raw answer (status line, headers, body). */
  function raw(
    target: string,
    body: string,
    base = server.inference,
  ): Promise<{ status: string; headers: string[]; body: string }> {
    return new Promise((resolve, reject) => {
      const sock = net.connect(Number(new URL(base).port), '127.0.0.1', () => {
        sock.write(
          `POST ${target} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        );
      });
      let got = '';
      sock.on('data', (d: Buffer) => {
        got += d.toString('utf8');
      });
      sock.on('end', () => {
        const [head, payload] = got.split('\r\n\r\n');
        const [status, ...headers] = head!.split('\r\n');
        resolve({ status: status!, headers: headers.map((h) => h.toLowerCase()), body: payload ?? '' });
      });
      sock.on('error', reject);
    });
  }

  it('should take an absolute-form request target (as a proxy sends it) like its path, and answer with a Content-Length', async () => {
    const a = await raw(`${server.inference}/predictions/mlp`, JSON.stringify(mlpInput(3)));
    expect([
      a.status,
      (JSON.parse(a.body) as number[]).length,
      a.headers.includes(`content-length: ${Buffer.byteLength(a.body)}`),
      a.headers.some((h) => h.startsWith('transfer-encoding')),
    ]).to.deep.equal(['HTTP/1.1 200 OK', 10, true, false]);
  });

  it('should answer each edge as the express chain did and count each answer once under its handler', async () => {
    const before = await Scrape.of(server);
    const answers = [
      await send('/predictions/mlp', { auth: false }),
      await send('/predictions/mlp', { headers: { 'content-encoding': 'br' } }),
      await send('/predictions/%E0%A4%A'),
      await send('/predictions/mlp', { body: '[1, 2' }),
      await send('/predictions/nope'),
      await send('/predictions/mlp/9.9'),
      await send('/PREDICTIONS/mlp/'),
      await send('/predictions/mlp/1.0?trace=1'),
      await send('/predictions/mlp', { method: 'PUT' }),
      await send('/predictions/mlp', { method: 'DELETE' }),
      // A model that does not exist is the answer, whatever the body: not the 400 / 415 of another model's rules.
      await send('/predictions/nope', { body: 'not json' }),
      await send('/predictions/nope', {
        headers: { 'content-type': 'application/octet-stream', 'x-tensor-shape': '1,784' },
        body: Buffer.alloc(784 * 4),
      }),
    ];
    const after = await Scrape.of(server);
    const probs = (i: number): number => (answers[i]!.body as number[]).length;
    expect(answers.map((a, i) => (a.status === 200 ? [200, probs(i)] : [a.status, a.body]))).to.deep.equal([
      [
        401,
        {
          code: 401,
          type: 'InvalidKeyException',
          message: 'Token Authorization failed. Token either incorrect, expired, or not provided correctly',
        },
      ],
      [
        415,
        {
          code: 415,
          type: 'UnsupportedMediaTypeException',
          message: 'unsupported Content-Encoding "br" (send identity or gzip)',
        },
      ],
      [400, { code: 400, type: 'BadRequestException', message: "Failed to decode param '%E0%A4%A'" }],
      [
        400,
        {
          code: 400,
          type: 'BadRequestException',
          message: "invalid JSON body: Expected ',' or ']' after array element in JSON at position 5",
        },
      ],
      [404, { code: 404, type: 'ResourceNotFoundException', message: 'Model not found: nope' }],
      [404, { code: 404, type: 'ResourceNotFoundException', message: 'Model version 9.9 not found for model mlp' }],
      [200, 10],
      [200, 10],
      // Regression: a PUT (TorchServe's `curl -T kitten.jpg` example) was express's 404.
      [200, 10],
      // Another method: the path exists, so a 405 naming the two it takes (it was express's 404).
      [
        405,
        {
          code: 405,
          type: 'MethodNotAllowedException',
          message: 'Requested method is not allowed, please refer to API document.',
        },
      ],
      [404, { code: 404, type: 'ResourceNotFoundException', message: 'Model not found: nope' }],
      [404, { code: 404, type: 'ResourceNotFoundException', message: 'Model not found: nope' }],
    ]);
    const d = (labels: Record<string, string>): number => delta(before, after, 'http_requests_total', labels);
    expect({
      none4xx: d({ handler: 'none', method: 'POST', status: '4xx' }),
      routeDelete: d({ handler: ROUTE, method: 'DELETE', status: '4xx' }),
      route4xx: d({ handler: ROUTE, method: 'POST', status: '4xx' }),
      route2xx: d({ handler: ROUTE, method: 'POST', status: '2xx' }),
      routePut2xx: d({ handler: ROUTE, method: 'PUT', status: '2xx' }),
      all: d({}),
      requests2xx: delta(before, after, 'Requests2XX', {}),
      requests4xx: delta(before, after, 'Requests4XX', {}),
      admitted: delta(before, after, 'ts_inference_requests_total', { model_name: 'mlp' }),
      admittedNamed: delta(before, after, 'ts_inference_requests_total', { model_name: 'mlp', model_version: '1.0' }),
    }).to.deep.equal({
      none4xx: 3,
      routeDelete: 1,
      route4xx: 5,
      route2xx: 2,
      routePut2xx: 1,
      all: 12,
      requests2xx: 3,
      requests4xx: 9,
      admitted: 3,
      admittedNamed: 1,
    });
  });

  it('should answer a request target that does not parse 400 on all three listeners and a malformed Open Inference Protocol parameter 400, each counted', async () => {
    const before = await Scrape.of(server);
    const targets = await Promise.all(
      [server.inference, server.management, server.metrics].map((base) => raw('http://[bad', '[]', base)),
    );
    const oip = await send('/v2/models/%zz/infer');
    const after = await Scrape.of(server);
    const refusal = { code: 400, type: 'BadRequestException', message: 'invalid request target "http://[bad"' };
    expect([...targets.map((t) => [t.status, JSON.parse(t.body) as unknown]), [oip.status, oip.body]]).to.deep.equal([
      ['HTTP/1.1 400 Bad Request', refusal],
      ['HTTP/1.1 400 Bad Request', refusal],
      ['HTTP/1.1 400 Bad Request', refusal],
      [400, { error: "Failed to decode param '%zz'" }],
    ]);
    expect({
      none4xx: delta(before, after, 'http_requests_total', { handler: 'none', method: 'POST', status: '4xx' }),
      requests4xx: delta(before, after, 'Requests4XX', {}),
    }).to.deep.equal({ none4xx: 2, requests4xx: 3 });
  });
});
