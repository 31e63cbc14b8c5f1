/**
 * The real server: Open Inference Protocol routes (health, metadata, JSON and binary infer) on
 * the demo mlp next to /predictions, the HTTP metrics' exact deltas per route and status, and
 * Server-Timing headers equal to what the request added to the metrics.
 */
import { expect } from 'chai';
import * as http from 'http';
import { parseServerTiming } from '../../frontend/http/server-timing.js';
import { configArgs } from './config-args.js';
import { delta, Scrape } from './generation-helpers.js';
import { generateStore, mlpInput, post, removeStores, startTsserve } from './harness.js';
import type { Tsserve } from './harness.js';

const INFER = '/v2/models/{model}[/versions/{version}]/infer';

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
}

async function send(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

function json(a: Answer): unknown {
  return JSON.parse(a.body.toString('utf8'));
}

function inferBody(rows: readonly (readonly number[])[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    ...extra,
    inputs: [{ name: 'input', shape: [rows.length, 784], datatype: 'FP32', data: rows }],
  });
}

/** A binary infer body: the JSON header, then the rows as little-endian float32. */
function binaryInfer(rows: readonly (readonly number[])[]): { body: Buffer; headerLength: number } {
  const header = Buffer.from(
    JSON.stringify({
      id: 'bin-1',
      parameters: { binary_data_output: true },
      inputs: [
        {
          name: 'input',
          shape: [rows.length, 784],
          datatype: 'FP32',
          parameters: { binary_data_size: rows.length * 784 * 4 },
        },
      ],
    }),
  );
  const data = Buffer.alloc(rows.length * 784 * 4);
  rows.flat().forEach((v, i) => data.writeFloatLE(v, i * 4));
  return { body: Buffer.concat([header, data]), headerLength: header.length };
}

/** The float32 values of a row rounded as the wire carries them. */
function f32(row: readonly number[]): number[] {
  return Array.from(Float32Array.from(row));
}

describe('Open Inference Protocol, HTTP metrics and Server-Timing (real tsserve start, mlp and tiny-lm)', function () {
  this.timeout(120_000);
  let server: Tsserve;
  let base = '';
  /** /predictions answers of mlpInput(1) and mlpInput(2), to compare the protocol's outputs with. */
  let expected: number[][] = [];

  before(async () => {
    server = await startTsserve({
      store: generateStore(['mlp', 'tiny-lm']),
      args: [...configArgs(), '--metrics-mode', 'prometheus', '--disable-system-metrics'],
    });
    base = server.inference;
    expected = [];
    for (const seed of [1, 2]) expected.push((await post(`${base}/predictions/mlp`, mlpInput(seed))).json as number[]);
  });

  after(() => {
    server?.kill();
    removeStores();
  });

  it('should answer the health routes with 200 and an empty body, 404 for a model or version it does not have', async () => {
    const answers = await Promise.all(
      [
        '/v2/health/live',
        '/v2/health/ready',
        '/v2/models/mlp/ready',
        '/v2/models/mlp/versions/1.0/ready',
        '/v2/models/tiny-lm/ready',
      ].map(async (p) => {
        const a = await send(base + p);
        return [a.status, a.body.length];
      }),
    );
    expect(answers).to.deep.equal([
      [200, 0],
      [200, 0],
      [200, 0],
      [200, 0],
      [200, 0],
    ]);
    const missing = await Promise.all(
      ['/v2/models/nope/ready', '/v2/models/mlp/versions/9/ready'].map(async (p) => {
        const a = await send(base + p);
        return [a.status, json(a)];
      }),
    );
    expect(missing).to.deep.equal([
      [404, { error: 'Model not found: nope' }],
      [404, { error: 'Model version 9 not found for model mlp' }],
    ]);
  });

  it('should describe the server and the mlp (IO read from its ONNX file, -1 for the batch dimension)', async () => {
    const [server_, mlp, versioned] = await Promise.all(
      ['/v2', '/v2/models/mlp', '/v2/models/mlp/versions/1.0'].map((p) => send(base + p)),
    );
    expect(json(server_!)).to.deep.equal({ name: 'tsserve', version: '0.1.0', extensions: ['binary_tensor_data'] });
    const meta = {
      name: 'mlp',
      versions: ['1.0'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'input', datatype: 'FP32', shape: [-1, 784] }],
      outputs: [{ name: 'probabilities', datatype: 'FP32', shape: [-1, 10] }],
    };
    expect([json(mlp!), json(versioned!)]).to.deep.equal([meta, meta]);
  });

  it('should infer a JSON [2,784] tensor to the same probabilities /predictions gives each row', async () => {
    const a = await send(`${base}/v2/models/mlp/infer`, {
      method: 'POST',
      body: inferBody([mlpInput(1), mlpInput(2)], { id: '42' }),
    });
    expect([a.status, a.headers.get('content-type'), a.headers.get('inference-header-content-length')]).to.deep.equal([
      200,
      'application/json',
      null,
    ]);
    expect(json(a)).to.deep.equal({
      model_name: 'mlp',
      model_version: '1.0',
      id: '42',
      outputs: [{ name: 'probabilities', shape: [2, 10], datatype: 'FP32', data: [...expected[0]!, ...expected[1]!] }],
    });
  });

  it('should infer a binary request and answer binary outputs: JSON header, then 80 bytes of little-endian float32', async () => {
    const { body, headerLength } = binaryInfer([mlpInput(1), mlpInput(2)]);
    const a = await send(`${base}/v2/models/mlp/versions/1.0/infer`, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(headerLength) },
    });
    const header =
      '{"model_name":"mlp","model_version":"1.0","id":"bin-1","outputs":[{"name":"probabilities","shape":[2,10],"datatype":"FP32","parameters":{"binary_data_size":80}}]}';
    expect([
      a.status,
      a.headers.get('content-type'),
      a.headers.get('inference-header-content-length'),
      a.headers.get('content-length'),
    ]).to.deep.equal([200, 'application/octet-stream', String(header.length), String(header.length + 80)]);
    expect(a.body.subarray(0, header.length).toString('utf8')).to.equal(header);
    const want = Buffer.alloc(80);
    [...f32(expected[0]!), ...f32(expected[1]!)].forEach((v, i) => want.writeFloatLE(v, i * 4));
    expect(a.body.subarray(header.length).equals(want)).to.equal(true);
  });

  it('should answer what the model cannot take with {"error"} and 400, an unknown model or version with 404, a body over the limit with 413', async () => {
    const row = mlpInput(3);
    const cases: [string, string][] = [
      [
        '/v2/models/mlp/infer',
        JSON.stringify({ inputs: [{ name: 'pixels', shape: [1, 784], datatype: 'FP32', data: row }] }),
      ],
      [
        '/v2/models/mlp/infer',
        JSON.stringify({ inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP64', data: row }] }),
      ],
      [
        '/v2/models/mlp/infer',
        JSON.stringify({ inputs: [{ name: 'input', shape: [2, 392], datatype: 'FP32', data: row }] }),
      ],
      [
        '/v2/models/mlp/infer',
        JSON.stringify({
          inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', data: row }],
          outputs: [{ name: 'logits' }],
        }),
      ],
      ['/v2/models/mlp/infer', '{"inputs": ['],
      ['/v2/models/tiny-lm/infer', inferBody([row])],
      ['/v2/models/nope/infer', inferBody([row])],
      ['/v2/models/mlp/versions/2.0/infer', inferBody([row])],
      ['/v2/models/mlp/infer', ' '.repeat(1048577)],
    ];
    const answers = [];
    for (const [p, body] of cases) {
      const a = await send(base + p, { method: 'POST', body });
      answers.push([a.status, json(a)]);
    }
    expect(answers).to.deep.equal([
      [400, { error: `unexpected input "pixels" for model 'mlp' (it takes input (FP32 [N,784]))` }],
      [400, { error: "input 'input': expected FP32 [N,784], got FP64 [1,784]" }],
      [400, { error: "input 'input': expected FP32 [N,784], got FP32 [2,392]" }],
      [400, { error: `unexpected inference output "logits" for model 'mlp' (it answers probabilities)` }],
      [400, { error: 'invalid JSON in the inference request: Unexpected end of JSON input' }],
      [
        400,
        {
          error:
            "model tiny-lm does not serve inference requests (kind generate); it answers on OpenAI's /v1 routes (GET /v1/models lists it)",
        },
      ],
      [404, { error: 'Model not found: nope' }],
      [404, { error: 'Model version 2.0 not found for model mlp' }],
      [413, { error: 'request body exceeds the limit of 1048576 bytes (--max-request-size)' }],
    ]);
    // /predictions says the same of a generation model, in TorchServe's shape.
    const pred = await send(`${base}/predictions/tiny-lm`, { method: 'POST', body: '[1]' });
    expect([pred.status, json(pred)]).to.deep.equal([
      400,
      {
        code: 400,
        type: 'BadRequestException',
        message:
          "model tiny-lm does not serve /predictions (kind generate); it answers on OpenAI's /v1 routes (GET /v1/models lists it)",
      },
    ]);
    // The infer path with another method: a 405 naming the one it takes, in the protocol's shape;
    // a path of the protocol's prefix that no route serves: a 404, in that shape too.
    const get = await send(`${base}/v2/models/mlp/infer`, { method: 'GET' });
    expect([get.status, json(get)]).to.deep.equal([
      405,
      { error: 'Method GET is not allowed on /v2/models/mlp/infer; it takes POST' },
    ]);
    const unknown = await send(`${base}/v2/models/mlp/explain`, { method: 'POST', body: '{}' });
    expect([unknown.status, json(unknown)]).to.deep.equal([
      404,
      { error: 'Invalid URL (POST /v2/models/mlp/explain)' },
    ]);
  });

  it('should refuse what a KServe client gets wrong with 400 naming it, before any worker: every datatype but FP32, parameters, classification, the binary header', async () => {
    const row = mlpInput(3);
    const input = (o: Record<string, unknown> = {}): Record<string, unknown> => ({
      name: 'input',
      shape: [1, 784],
      datatype: 'FP32',
      data: row,
      ...o,
    });
    const datatypes = [
      'BOOL',
      'UINT8',
      'UINT16',
      'UINT32',
      'UINT64',
      'INT8',
      'INT16',
      'INT32',
      'INT64',
      'FP16',
      'FP64',
      'BYTES',
    ];
    const jsonCases: unknown[] = [
      ...datatypes.map((d) => ({
        inputs: [input({ datatype: d, data: row.map(() => (d === 'BOOL' ? true : d === 'BYTES' ? 'a' : 0)) })],
      })),
      { inputs: [input({ datatype: 'fp32' })] },
      { inputs: [input({ data: null })] },
      { inputs: [input(), input({ name: 'mask' })] },
      { parameters: 1, inputs: [input()] },
      { inputs: [input({ parameters: 'binary' })] },
      { parameters: { binary_data_output: 'true' }, inputs: [input()] },
      { inputs: [input()], outputs: [{ name: 'probabilities', parameters: { binary_data: 'yes' } }] },
      { inputs: [input()], outputs: [{ name: 'probabilities', parameters: { classification: 3 } }] },
    ];
    // The binary extension: a valid header and body, then the header's length wrong every way.
    const header = Buffer.from(
      JSON.stringify({
        inputs: [{ name: 'input', shape: [1, 784], datatype: 'FP32', parameters: { binary_data_size: 3136 } }],
      }),
    );
    const body = Buffer.concat([header, Buffer.alloc(3136)]);
    const binaryCases: [Buffer, string | undefined][] = [
      [body, String(body.length + 1)],
      [body, String(header.length - 5)],
      [body, '-5'],
      [body, 'abc'],
      [body.subarray(0, body.length - 10), String(header.length)],
      [body, undefined],
    ];
    const before = await Scrape.of(server);
    const answers = [];
    for (const c of jsonCases) {
      const a = await send(`${base}/v2/models/mlp/infer`, { method: 'POST', body: JSON.stringify(c) });
      answers.push([a.status, json(a)]);
    }
    for (const [b, length] of binaryCases) {
      const a = await send(`${base}/v2/models/mlp/infer`, {
        method: 'POST',
        body: b,
        headers: length === undefined ? {} : { 'inference-header-content-length': length },
      });
      answers.push([a.status, json(a)]);
    }
    const after = await Scrape.of(server);
    expect(answers).to.deep.equal([
      ...datatypes.map((d) => [
        400,
        {
          error:
            d === 'BYTES'
              ? "input 'input': datatype BYTES does not match the model's FP32"
              : `input 'input': expected FP32 [N,784], got ${d} [1,784]`,
        },
      ]),
      [
        400,
        {
          error: `input 'input': datatype "fp32" is not one of the protocol's (BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES, BF16)`,
        },
      ],
      [400, { error: "input 'input': data must be an array, got null" }],
      [400, { error: `unexpected input "mask" for model 'mlp' (it takes input (FP32 [N,784]))` }],
      [400, { error: 'parameters must be an object, got a number' }],
      [400, { error: "input 'input': parameters must be an object, got a string" }],
      [400, { error: 'parameters.binary_data_output must be true or false, got "true"' }],
      [400, { error: 'output \'probabilities\': parameters.binary_data must be true or false, got "yes"' }],
      [
        400,
        {
          error:
            "output 'probabilities': parameters.classification asks for the classification extension, which this server does not have (GET /v2 lists its extensions)",
        },
      ],
      [
        400,
        { error: `Inference-Header-Content-Length ${body.length + 1} is not within the body's ${body.length} bytes` },
      ],
      [
        400,
        {
          error: `invalid JSON in the inference request's first ${header.length - 5} bytes (Inference-Header-Content-Length): Expected ',' or '}' after property value in JSON at position ${header.length - 5}`,
        },
      ],
      [400, { error: 'Inference-Header-Content-Length "-5" is not a byte count' }],
      [400, { error: 'Inference-Header-Content-Length "abc" is not a byte count' }],
      [400, { error: "input 'input': the body holds 3126 bytes of binary data, binary_data_size says 3136" }],
      [
        400,
        {
          error: `invalid JSON in the inference request: Unexpected non-whitespace character after JSON at position ${header.length}; binary tensor data after the JSON needs the Inference-Header-Content-Length header`,
        },
      ],
    ]);
    // None reached the model's queue or hurt a worker, and the model still answers.
    expect([
      delta(before, after, 'ts_inference_requests_total', { model_name: 'mlp' }),
      delta(before, after, 'tsserve_worker_restarts_total', { model_name: 'mlp' }),
      delta(before, after, 'http_requests_total', { handler: INFER, status: '4xx' }),
    ]).to.deep.equal([0, 0, jsonCases.length + binaryCases.length]);
    const ok = await send(`${base}/v2/models/mlp/infer`, { method: 'POST', body: inferBody([row]) });
    expect(ok.status).to.equal(200);
  });

  it('should count exactly one http_requests_total per response, by route template, method and status class, and OIP inferences in ts_inference_requests_total', async () => {
    const before = await Scrape.of(server);
    for (let i = 0; i < 3; i++) await send(`${base}/v2/health/live`);
    await send(`${base}/v2/models/mlp/infer`, {
      method: 'POST',
      body: inferBody([mlpInput(4), mlpInput(5), mlpInput(6)]),
    });
    await send(`${base}/v2/models/mlp/versions/1.0/infer`, { method: 'POST', body: inferBody([mlpInput(4)]) });
    await send(`${base}/v2/models/mlp/infer`, { method: 'POST', body: '[' });
    await send(`${base}/v2/models/nope/infer`, { method: 'POST', body: inferBody([mlpInput(4)]) });
    await post(`${base}/predictions/mlp`, mlpInput(7));
    await send(`${base}/no/such/path`);
    await send(`${server.management}/models`);
    await send(`${server.metrics}/nothing-here`);
    const after = await Scrape.of(server);
    const d = (labels: Record<string, string>): number => delta(before, after, 'http_requests_total', labels);
    expect({
      live: d({ handler: '/v2/health/live', method: 'GET', status: '2xx' }),
      infer2xx: d({ handler: INFER, method: 'POST', status: '2xx' }),
      infer4xx: d({ handler: INFER, method: 'POST', status: '4xx' }),
      predictions: d({ handler: '/predictions/{model}[/{version}]', method: 'POST', status: '2xx' }),
      none4xx: d({ handler: 'none', method: 'GET', status: '4xx' }),
      models: d({ handler: '/models', method: 'GET', status: '2xx' }),
      all: d({}),
      scrapes: after.get('http_requests_total', { handler: '/metrics' }),
      admittedUnnamed: delta(before, after, 'ts_inference_requests_total', {
        model_name: 'mlp',
        model_version: 'default',
      }),
      admittedNamed: delta(before, after, 'ts_inference_requests_total', { model_name: 'mlp', model_version: '1.0' }),
      inferSizeCount: delta(before, after, 'http_request_size_bytes_count', { handler: INFER }),
      highrCount: delta(before, after, 'http_request_duration_highr_seconds_count', {}),
    }).to.deep.equal({
      live: 3,
      infer2xx: 2,
      infer4xx: 2,
      predictions: 1,
      none4xx: 2,
      models: 1,
      all: 11,
      scrapes: 0,
      admittedUnnamed: 2,
      admittedNamed: 1,
      inferSizeCount: 4,
      highrCount: 11,
    });
  });

  it('should send Server-Timing on /predictions and OIP infer whose queue and total equal what the request added to ts_*_microseconds', async () => {
    const got: Record<string, number>[] = [];
    const added: number[][] = [];
    for (const [url, body, version] of [
      [`${base}/predictions/mlp`, JSON.stringify(mlpInput(8)), 'default'],
      [`${base}/v2/models/mlp/versions/1.0/infer`, inferBody([mlpInput(8), mlpInput(9)]), '1.0'],
    ] as const) {
      const before = await Scrape.of(server);
      const a = await send(url, { method: 'POST', body });
      const after = await Scrape.of(server);
      const labels = { model_name: 'mlp', model_version: version };
      const t = parseServerTiming(a.headers.get('server-timing') ?? '');
      got.push(t);
      added.push([
        delta(before, after, 'ts_queue_latency_microseconds', labels) / 1000 - (t.queue ?? NaN),
        delta(before, after, 'ts_inference_latency_microseconds', labels) / 1000 - (t.total ?? NaN),
      ]);
    }
    expect(got.map((t) => Object.keys(t))).to.deep.equal([
      ['queue', 'handler', 'total'],
      ['queue', 'handler', 'total'],
    ]);
    // The header rounds to the microsecond: each difference is at most half of one (in ms).
    expect(added.flat().map((x) => Math.abs(x) <= 0.0005 + 1e-9)).to.deep.equal([true, true, true, true]);
    expect(got.map((t) => (t.queue ?? 0) + (t.handler ?? 0) <= (t.total ?? 0) + 0.002)).to.deep.equal([true, true]);
  });

  it('should send Server-Timing on a /v1 answer (header) and a stream (trailer) equal to what the request added to the engine histograms', async () => {
    const labels = { model_name: 'tiny-lm' };
    const before = await Scrape.of(server);
    const a = await send(`${base}/v1/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'tiny-lm', prompt: 'Hello', max_tokens: 6 }),
    });
    const after = await Scrape.of(server);
    expect(a.status).to.equal(200);
    const t = parseServerTiming(a.headers.get('server-timing') ?? '');
    expect(Object.keys(t)).to.deep.equal(['queue', 'prefill', 'decode', 'total']);
    const diffs = [
      delta(before, after, 'ts_request_queue_time_seconds_sum', labels) * 1000 - (t.queue ?? NaN),
      delta(before, after, 'ts_request_prefill_time_seconds_sum', labels) * 1000 - (t.prefill ?? NaN),
      delta(before, after, 'ts_request_decode_time_seconds_sum', labels) * 1000 - (t.decode ?? NaN),
      delta(before, after, 'ts_e2e_request_latency_seconds_sum', labels) * 1000 - (t.total ?? NaN),
    ];
    expect(diffs.map((x) => Math.abs(x) <= 0.0005 + 1e-9)).to.deep.equal([true, true, true, true]);

    const trailers = await new Promise<{ declared: string | undefined; timing: string | undefined }>(
      (resolve, reject) => {
        const req = http.request(
          `${base}/v1/completions`,
          { method: 'POST', headers: { 'content-type': 'application/json' } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ declared: res.headers.trailer, timing: res.trailers['server-timing'] }));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify({ model: 'tiny-lm', prompt: 'Hello', max_tokens: 4, stream: true }));
      },
    );
    expect(trailers.declared).to.equal('Server-Timing');
    expect(Object.keys(parseServerTiming(trailers.timing ?? ''))).to.deep.equal([
      'queue',
      'prefill',
      'decode',
      'total',
    ]);
  });
});
