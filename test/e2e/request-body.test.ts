/**
 * The hard edges of request bodies against the real server: JSON depth and element bounds,
 * float32 overflow, 413 from Content-Length and from bytes read on every listener's routes,
 * gzip and other encodings, the request and idle timeouts (408), binary tensors — each with its
 * exact status and message, and the refused bodies never reaching a worker.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as net from 'net';
import * as path from 'path';
import * as zlib from 'zlib';
import { call, generateStore, mlpInput, post, scrape, slowModelStore, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';

/** An answer read off a raw socket: status and JSON body. */
interface RawAnswer {
  readonly status: number;
  readonly json: unknown;
  readonly closed: boolean;
}

/**
 * Sends `head` then each part of `parts` `gapMs` apart on a raw socket (until the server
 * answers), and resolves with the first answer and whether the server closed the connection.
 */
function raw(url: string, head: string, parts: readonly (string | Buffer)[], gapMs = 0): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname);
    let got = Buffer.alloc(0);
    let timer: NodeJS.Timeout | null = null;
    // A server that refuses a body of unknown length answers and closes without reading the
    // rest, so a write still under way can fail (EPIPE, or ECONNRESET): the answer already read
    // is what counts, as for curl. Any other error fails the call.
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'ECONNRESET') reject(e);
    });
    s.write(head);
    let i = 0;
    const next = (): void => {
      // Nothing more is sent once the server has begun to answer.
      if (i >= parts.length || s.destroyed || got.length > 0) return;
      s.write(parts[i++]!);
      timer = setTimeout(next, gapMs);
    };
    next();
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
    });
    s.on('close', () => {
      if (timer !== null) clearTimeout(timer);
      const text = got.toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const body = text.slice(text.indexOf('\r\n\r\n') + 4);
      let json: unknown = body;
      try {
        json = JSON.parse(body);
      } catch {
        /* keep the text */
      }
      resolve({ status, json, closed: true });
    });
  });
}

/** A POST head with `headers` (no Connection: close: the server must close by itself). */
function head(pathname: string, headers: Record<string, string>): string {
  return `POST ${pathname} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('')}\r\n`;
}

/** A chunked-encoding piece. */
function chunk(s: string): string {
  return `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`;
}

/** The sum of ts_inference_requests_total over every series. */
function admitted(text: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith('ts_inference_requests_total{'))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

const err = (code: number, type: string, message: string): object => ({ code, type, message });

/** POSTs raw bytes with `headers`; status and JSON body. */
async function postBytes(
  url: string,
  body: Buffer | string,
  headers: Record<string, string>,
): Promise<[number, unknown]> {
  const res = await fetch(url, { method: 'POST', headers, body });
  return [res.status, await res.json()];
}

describe('request bodies (real server, limits and timeouts)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let workerPid = 0;
  let mlp = '';

  before(async () => {
    // One store: the demo mlp (built-in onnx handler) and `echo`, a user handler.
    const store = slowModelStore({ echo: { batchSize: 1 } });
    fs.cpSync(path.join(generateStore(['mlp']), 'mlp'), path.join(store, 'mlp'), { recursive: true });
    server = await startTsserve({
      store,
      args: [
        '--disable-system-metrics',
        '--max-request-size',
        '20000',
        '--max-json-elements',
        '1000',
        '--request-timeout',
        '1500',
        '--request-idle-timeout',
        '1000',
      ],
    });
    mlp = `${server.inference}/predictions/mlp`;
    const d = await call('GET', `${server.management}/models/mlp`);
    workerPid = (d.json as Array<{ workers: Array<{ pid: number }> }>)[0]!.workers[0]!.pid;
  });

  after(() => {
    server?.kill();
  });

  it('should refuse a deeply nested body with 400 before it reaches a worker', async () => {
    const before = admitted(await scrape(server));
    // Sent among good requests: those are served (before the bound, the batch holding the deep body failed whole).
    const [r, ...good] = await Promise.all([
      post(mlp, `${'['.repeat(5000)}${']'.repeat(5000)}`),
      ...[0, 1, 2, 3].map((i) => post(mlp, mlpInput(i))),
    ]);
    expect([r!.status, r!.json]).to.deep.equal([
      400,
      err(400, 'BadRequestException', 'JSON body nests deeper than 32 levels (--max-json-depth)'),
    ]);
    expect(good.map((g) => g.status)).to.deep.equal([200, 200, 200, 200]);
    const e = await post(`${server.inference}/predictions/echo`, `{"a":${'['.repeat(40)}${']'.repeat(40)}}`);
    expect([e.status, e.json]).to.deep.equal([
      400,
      err(400, 'BadRequestException', 'JSON body nests deeper than 32 levels (--max-json-depth)'),
    ]);
    expect(admitted(await scrape(server))).to.equal(before + 4);
    const d = await call('GET', `${server.management}/models/mlp`);
    expect((d.json as Array<{ workers: Array<{ pid: number }> }>)[0]!.workers.map((w) => w.pid)).to.deep.equal([
      workerPid,
    ]);
  });

  it('should refuse a value that overflows float32 with 400 before it reaches a worker', async () => {
    const before = admitted(await scrape(server));
    const r = await post(mlp, `[1e308${',0'.repeat(783)}]`);
    expect([r.status, r.json]).to.deep.equal([
      400,
      err(
        400,
        'BadRequestException',
        'element 0 (1e308) is not finite in float32 (largest magnitude 3.4028234663852886e38)',
      ),
    ]);
    const w = await post(mlp, { data: [0, -3.5e38] });
    expect([w.status, w.json]).to.deep.equal([
      400,
      err(
        400,
        'BadRequestException',
        'element 1 (-3.5e+38) is not finite in float32 (largest magnitude 3.4028234663852886e38)',
      ),
    ]);
    expect(admitted(await scrape(server))).to.equal(before);
  });

  it('should refuse more JSON elements than --max-json-elements with 400', async () => {
    const r = await post(mlp, Array(1001).fill(0));
    expect([r.status, r.json]).to.deep.equal([
      400,
      err(400, 'BadRequestException', 'JSON body has more than 1000 elements (--max-json-elements)'),
    ]);
    const e = await post(`${server.inference}/predictions/echo`, { list: Array(1001).fill('a') });
    expect([e.status, e.json]).to.deep.equal([
      400,
      err(400, 'BadRequestException', 'JSON body has more than 1000 elements (--max-json-elements)'),
    ]);
  });

  it('should hand a user handler its parsed JSON body', async () => {
    const r = await post(`${server.inference}/predictions/echo`, { sleepMs: 1 });
    expect([r.status, r.json]).to.deep.equal([200, { slept: 1 }]);
  });

  it('should answer 413 from Content-Length before reading the body, on predictions, /v1 and management', async () => {
    const big = { 'content-length': '50000000', 'content-type': 'application/json' };
    const tooLarge = err(
      413,
      'RequestEntityTooLargeException',
      'request body exceeds the limit of 20000 bytes (--max-request-size)',
    );
    for (const [url, p] of [
      [server.inference, '/predictions/mlp'],
      [server.management, '/models?url=mlp'],
    ] as const) {
      const r = await raw(url, head(p, big), ['[0,0,0']);
      expect([p, r.status, r.json]).to.deep.equal([p, 413, tooLarge]);
    }
    // /v1 answers in OpenAI's error shape, as its byte-count 413 does.
    const v1 = await raw(server.inference, head('/v1/completions', big), ['[0,0,0']);
    expect([v1.status, v1.json]).to.deep.equal([
      413,
      {
        error: {
          message: 'request body exceeds the limit of 20000 bytes (--max-request-size)',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    ]);
  });

  it('should drain an over-limit body of a declared length after its 413, so a client that sends it whole reads the answer, and serve the next request', async () => {
    // fetch writes the whole 30 kB body before it reads: closing on it would be EPIPE, not a 413.
    const body = JSON.stringify(Array(10_000).fill(0.5));
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await post(mlp, body));
    const tooLarge = err(
      413,
      'RequestEntityTooLargeException',
      'request body exceeds the limit of 20000 bytes (--max-request-size)',
    );
    expect(answers.map((r) => [r.status, r.json])).to.deep.equal([
      [413, tooLarge],
      [413, tooLarge],
      [413, tooLarge],
    ]);
    expect((await post(mlp, mlpInput(1))).status).to.equal(200);
  });

  it('should send 100 Continue only to a request whose body is read: 413, 415 and an unknown model answered without it, the connection closed', async () => {
    // curl sends Expect: 100-continue for bodies over 1 MiB; node would send the 100 at once.
    const tooLarge = err(
      413,
      'RequestEntityTooLargeException',
      'request body exceeds the limit of 20000 bytes (--max-request-size)',
    );
    const big = await raw(
      server.inference,
      head('/predictions/mlp', { 'content-length': '50000000', expect: '100-continue' }),
      [],
    );
    expect([big.status, big.json, big.closed]).to.deep.equal([413, tooLarge, true]);
    const gz = await raw(
      server.inference,
      head('/predictions/mlp', { 'content-length': '10', 'content-encoding': 'br', expect: '100-continue' }),
      [],
    );
    expect([gz.status, gz.json]).to.deep.equal([
      415,
      err(415, 'UnsupportedMediaTypeException', 'unsupported Content-Encoding "br" (send identity or gzip)'),
    ]);
    const missing = await raw(
      server.inference,
      head('/predictions/nope', { 'content-length': '10', expect: '100-continue' }),
      [],
    );
    expect([missing.status, missing.json]).to.deep.equal([
      404,
      err(404, 'ResourceNotFoundException', 'Model not found: nope'),
    ]);
    // A body that passes the header checks gets its 100 Continue, then its answer.
    const body = JSON.stringify(mlpInput(3));
    const { hostname, port } = new URL(server.inference);
    const text = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(port), hostname);
      let got = '';
      sock.on('error', reject);
      sock.write(
        head('/predictions/mlp', {
          'content-length': String(Buffer.byteLength(body)),
          'content-type': 'application/json',
          expect: '100-continue',
          connection: 'close',
        }),
      );
      sock.on('data', (d: Buffer) => {
        const first = got === '';
        got += d.toString('utf8');
        if (first && got.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) sock.write(body);
      });
      sock.on('close', () => resolve(got));
    });
    expect(text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'), text.slice(0, 200)).to.equal(true);
    expect(JSON.parse(text.slice(text.lastIndexOf('\r\n\r\n') + 4))).to.deep.equal((await post(mlp, mlpInput(3))).json);
  });

  it('should answer 413 from the bytes read (chunked, no Content-Length), on predictions, /v1 and management', async () => {
    const tooLarge = err(
      413,
      'RequestEntityTooLargeException',
      'request body exceeds the limit of 20000 bytes (--max-request-size)',
    );
    const chunked = { 'transfer-encoding': 'chunked', 'content-type': 'application/json' };
    const parts = Array.from({ length: 30 }, () => chunk('0,'.repeat(500)));
    const v1 = await raw(server.inference, head('/v1/completions', chunked), parts);
    expect([v1.status, v1.json]).to.deep.equal([
      413,
      {
        error: {
          message: 'request body exceeds the limit of 20000 bytes (--max-request-size)',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      },
    ]);
    for (const [url, p] of [
      [server.inference, '/predictions/mlp'],
      [server.management, '/models?url=mlp'],
    ] as const) {
      const r = await raw(url, head(p, chunked), parts);
      expect([p, r.status, r.json]).to.deep.equal([p, 413, tooLarge]);
    }
  });

  it('should inflate a gzip body, count its inflated size against the limit, and answer 415 for other encodings', async () => {
    const plain = await post(mlp, mlpInput(3));
    expect(
      await postBytes(mlp, zlib.gzipSync(JSON.stringify(mlpInput(3))), { 'content-encoding': 'gzip' }),
    ).to.deep.equal([200, plain.json]);
    const bomb = zlib.gzipSync(Buffer.alloc(100_000, 0x20));
    expect(bomb.length).to.be.below(20000);
    expect(await postBytes(mlp, bomb, { 'content-encoding': 'gzip' })).to.deep.equal([
      413,
      err(
        413,
        'RequestEntityTooLargeException',
        'inflated request body exceeds the limit of 20000 bytes (--max-request-size)',
      ),
    ]);
    expect(await postBytes(mlp, '[1,2,3]', { 'content-encoding': 'gzip' })).to.deep.equal([
      400,
      err(400, 'BadRequestException', 'invalid gzip body: incorrect header check'),
    ]);
    expect(await postBytes(mlp, '[1,2,3]', { 'content-encoding': 'br' })).to.deep.equal([
      415,
      err(415, 'UnsupportedMediaTypeException', 'unsupported Content-Encoding "br" (send identity or gzip)'),
    ]);
  });

  it('should bound the Open Inference Protocol\'s infer bodies the same way: gzip inflated, 413 from bytes read, 415, 408 stalled, in its {"error"} shape', async () => {
    const infer = `${server.inference}/v2/models/mlp/infer`;
    const request = JSON.stringify({
      inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', data: mlpInput(3) }],
    });
    const plain = await postBytes(infer, request, { 'content-type': 'application/json' });
    expect(plain[0]).to.equal(200);
    expect(
      await postBytes(infer, zlib.gzipSync(request), {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      }),
    ).to.deep.equal(plain);
    const bomb = zlib.gzipSync(Buffer.alloc(100_000, 0x20));
    expect(await postBytes(infer, bomb, { 'content-encoding': 'gzip' })).to.deep.equal([
      413,
      { error: 'inflated request body exceeds the limit of 20000 bytes (--max-request-size)' },
    ]);
    expect(await postBytes(infer, request, { 'content-encoding': 'br' })).to.deep.equal([
      415,
      { error: 'unsupported Content-Encoding "br" (send identity or gzip)' },
    ]);
    const chunked = await raw(
      server.inference,
      head('/v2/models/mlp/infer', { 'transfer-encoding': 'chunked', 'content-type': 'application/json' }),
      Array.from({ length: 30 }, () => chunk('0,'.repeat(500))),
    );
    expect([chunked.status, chunked.json]).to.deep.equal([
      413,
      { error: 'request body exceeds the limit of 20000 bytes (--max-request-size)' },
    ]);
    const stalled = await raw(server.inference, head('/v2/models/mlp/infer', { 'content-length': '5000' }), [
      '{"inputs"',
    ]);
    expect([stalled.status, stalled.json]).to.deep.equal([
      408,
      { error: 'no request body bytes for 1000 ms (--request-idle-timeout)' },
    ]);
  });

  it('should refuse Open Inference Protocol bodies past the JSON bounds, with values that overflow float32 (JSON or binary) or a header length that is not a number with 400, none reaching a worker', async () => {
    const infer = `${server.inference}/v2/models/mlp/infer`;
    const before = admitted(await scrape(server));
    const tensor = (data: unknown): string =>
      JSON.stringify({ inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', data }] });
    const overflow = Array(784).fill(0);
    overflow[5] = 1e39;
    const binary = Buffer.alloc(784 * 4);
    binary.writeFloatLE(Infinity, 8);
    const header = JSON.stringify({
      inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', parameters: { binary_data_size: 784 * 4 } }],
    });
    expect([
      await postBytes(infer, `{"inputs":${'['.repeat(40)}${']'.repeat(40)}}`, { 'content-type': 'application/json' }),
      await postBytes(infer, tensor(Array(1001).fill(0)), { 'content-type': 'application/json' }),
      await postBytes(infer, tensor(overflow), { 'content-type': 'application/json' }),
      await postBytes(infer, Buffer.concat([Buffer.from(header), binary]), {
        'content-type': 'application/octet-stream',
        'inference-header-content-length': String(Buffer.byteLength(header)),
      }),
      await postBytes(infer, Buffer.concat([Buffer.from(header), binary]), {
        'content-type': 'application/octet-stream',
        'inference-header-content-length': 'abc',
      }),
    ]).to.deep.equal([
      [400, { error: 'JSON body nests deeper than 32 levels (--max-json-depth)' }],
      [400, { error: 'JSON body has more than 1000 elements (--max-json-elements)' }],
      [
        400,
        {
          error: "input 'input': element 5 (1e+39) is not finite in float32 (largest magnitude 3.4028234663852886e38)",
        },
      ],
      [
        400,
        {
          error:
            "input 'input': element 2 (Infinity) is not finite in float32 (largest magnitude 3.4028234663852886e38)",
        },
      ],
      [400, { error: 'Inference-Header-Content-Length "abc" is not a byte count' }],
    ]);
    expect(admitted(await scrape(server))).to.equal(before);
  });

  it('should cut a slow body off at --request-timeout with 408 while other requests are served', async () => {
    // 4 bytes every 300 ms: never idle for 1000 ms, never done within 1500 ms.
    const slow = raw(
      server.inference,
      head('/predictions/mlp', { 'content-length': '5000' }),
      Array.from({ length: 40 }, () => '0,0,'),
      300,
    );
    const others = await Promise.all([0, 1, 2].map((i) => post(mlp, mlpInput(i))));
    expect(others.map((o) => o.status)).to.deep.equal([200, 200, 200]);
    const r = await slow;
    expect([r.status, r.json, r.closed]).to.deep.equal([
      408,
      err(408, 'RequestTimeoutException', 'request body not received within 1500 ms (--request-timeout)'),
      true,
    ]);
  });

  it('should cut a stalled body off at --request-idle-timeout with 408', async () => {
    const r = await raw(server.inference, head('/predictions/mlp', { 'content-length': '5000' }), ['[0,0']);
    expect([r.status, r.json]).to.deep.equal([
      408,
      err(408, 'RequestTimeoutException', 'no request body bytes for 1000 ms (--request-idle-timeout)'),
    ]);
  });

  it('should take a binary float32 tensor and answer as for the same values in JSON', async () => {
    const values = Float32Array.from(mlpInput(5));
    const json = await post(mlp, Array.from(values));
    const res = await fetch(mlp, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'x-tensor-shape': '1,784' },
      body: Buffer.from(values.buffer),
    });
    expect([res.status, await res.json()]).to.deep.equal([200, json.json]);
  });

  it('should refuse bad binary tensors with 400 and binary bodies to a user handler with 415', async () => {
    const send = (url: string, headers: Record<string, string>, body: Buffer): Promise<[number, unknown]> =>
      postBytes(url, body, { 'content-type': 'application/octet-stream', ...headers });
    const ok = Buffer.from(Float32Array.from(mlpInput(1)).buffer);
    expect(await send(mlp, {}, ok)).to.deep.equal([
      400,
      err(
        400,
        'BadRequestException',
        'x-tensor-shape is required with Content-Type application/octet-stream (e.g. x-tensor-shape: 1,784)',
      ),
    ]);
    expect(await send(mlp, { 'x-tensor-shape': '1,x' }, ok)).to.deep.equal([
      400,
      err(400, 'BadRequestException', 'x-tensor-shape "1,x" is not a comma-separated list of positive integers'),
    ]);
    expect(await send(mlp, { 'x-tensor-shape': '1,783' }, ok)).to.deep.equal([
      400,
      err(400, 'BadRequestException', 'body has 3136 bytes; x-tensor-shape 1,783 needs 3132 (FP32, little-endian)'),
    ]);
    const nan = Float32Array.from(mlpInput(1));
    nan[7] = Number.NaN;
    expect(await send(mlp, { 'x-tensor-shape': '1,784' }, Buffer.from(nan.buffer))).to.deep.equal([
      400,
      err(
        400,
        'BadRequestException',
        "input 'input': element 7 (NaN) is not finite in float32 (largest magnitude 3.4028234663852886e38)",
      ),
    ]);
    expect(await send(`${server.inference}/predictions/echo`, { 'x-tensor-shape': '1,784' }, ok)).to.deep.equal([
      415,
      err(
        415,
        'UnsupportedMediaTypeException',
        'model echo takes JSON bodies: binary tensors (Content-Type application/octet-stream) go to models with the built-in onnx handler',
      ),
    ]);
  });

  it('should have served everything with the first worker (none was killed)', async () => {
    const d = await call('GET', `${server.management}/models/mlp`);
    expect((d.json as Array<{ workers: Array<{ pid: number }> }>)[0]!.workers.map((w) => w.pid)).to.deep.equal([
      workerPid,
    ]);
  });
});
