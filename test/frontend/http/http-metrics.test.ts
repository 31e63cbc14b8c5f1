import { expect } from 'chai';
import express from 'express';
import type * as http from 'http';
import type { AddressInfo } from 'net';
import { HttpMetrics, routeTemplate, statusClass } from '../../../frontend/http/http-metrics.js';

interface Recorded {
  readonly name: string;
  readonly dims: string;
  readonly value: number;
}

/** A recording bind: every record lands in `out` as name, dims and value. */
function recorder(
  out: Recorded[],
  binds: string[],
): (name: string, dims: Readonly<Record<string, string>>) => { record(v: number): void } {
  return (name, dims) => {
    const d = Object.entries(dims)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    binds.push(`${name}{${d}}`);
    return {
      record: (value: number) => {
        out.push({ name, dims: d, value });
      },
    };
  };
}

describe('routeTemplate', () => {
  it("should turn express paths into the instrumentator's templates", () => {
    expect(
      [
        '/predictions/:model{/:version}',
        '/v2/models/:model{/versions/:version}/infer',
        '/v1/completions',
        '/metrics/{*rest}',
      ].map(routeTemplate),
    ).to.deep.equal([
      '/predictions/{model}[/{version}]',
      '/v2/models/{model}[/versions/{version}]/infer',
      '/v1/completions',
      '/metrics/[{rest...}]',
    ]);
  });

  it('should group statuses into classes', () => {
    expect([200, 204, 404, 413, 503].map(statusClass)).to.deep.equal(['2xx', '2xx', '4xx', '4xx', '5xx']);
  });
});

describe('HttpMetrics', () => {
  let server: http.Server;
  let base = '';
  const out: Recorded[] = [];
  const binds: string[] = [];

  before(async () => {
    const app = express();
    app.use(new HttpMetrics(recorder(out, binds)).middleware({ exclude: ['/metrics'] }));
    app.get('/items/:id', (_req, res) => {
      res.status(200).send('abc');
    });
    app.post('/items/:id', (_req, res) => {
      res.status(503).json({ e: 1 });
    });
    app.get('/metrics', (_req, res) => {
      res.send('scrape');
    });
    app.get('/stream', (_req, res) => {
      res.write('12');
      res.write(Buffer.from([1, 2, 3]));
      res.end('é');
    });
    app.use((_req, res) => {
      res.status(404).send('no');
    });
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => {
    server.close();
  });

  it('should record count, sizes and durations per route template, method and status class, binding each series once', async () => {
    for (const [method, p, body] of [
      ['GET', '/items/1', undefined],
      ['GET', '/items/2', undefined],
      ['POST', '/items/3', '{"x":1}'],
      ['GET', '/nowhere', undefined],
      ['GET', '/metrics', undefined],
      ['GET', '/stream', undefined],
    ] as const) {
      const res = await fetch(base + p, { method, ...(body !== undefined ? { body } : {}) });
      await res.arrayBuffer();
    }
    const counts = out.filter((r) => r.name === 'http_requests_total').map((r) => `${r.dims} ${r.value}`);
    const reqSizes = out.filter((r) => r.name === 'http_request_size_bytes').map((r) => `${r.dims} ${r.value}`);
    const resSizes = out.filter((r) => r.name === 'http_response_size_bytes').map((r) => `${r.dims} ${r.value}`);
    const durations = out.filter((r) => r.name === 'http_request_duration_seconds').map((r) => r.dims);
    expect(counts).to.deep.equal([
      'handler=/items/{id},method=GET,status=2xx 1',
      'handler=/items/{id},method=GET,status=2xx 1',
      'handler=/items/{id},method=POST,status=5xx 1',
      'handler=none,method=GET,status=4xx 1',
      'handler=/stream,method=GET,status=2xx 1',
    ]);
    expect(reqSizes).to.deep.equal([
      'handler=/items/{id} 0',
      'handler=/items/{id} 0',
      'handler=/items/{id} 7',
      'handler=none 0',
      'handler=/stream 0',
    ]);
    expect(resSizes).to.deep.equal([
      'handler=/items/{id} 3',
      'handler=/items/{id} 3',
      'handler=/items/{id} 7',
      'handler=none 2',
      'handler=/stream 7',
    ]);
    expect(durations).to.deep.equal([
      'handler=/items/{id},method=GET',
      'handler=/items/{id},method=GET',
      'handler=/items/{id},method=POST',
      'handler=none,method=GET',
      'handler=/stream,method=GET',
    ]);
    expect(out.filter((r) => r.name === 'http_request_duration_highr_seconds').length).to.equal(5);
    expect(out.every((r) => r.value >= 0)).to.equal(true);
    expect(binds).to.deep.equal([
      'http_request_duration_highr_seconds{}',
      'http_request_size_bytes{handler=/items/{id}}',
      'http_response_size_bytes{handler=/items/{id}}',
      'http_request_duration_seconds{handler=/items/{id},method=GET}',
      'http_requests_total{handler=/items/{id},method=GET,status=2xx}',
      'http_request_duration_seconds{handler=/items/{id},method=POST}',
      'http_requests_total{handler=/items/{id},method=POST,status=5xx}',
      'http_request_size_bytes{handler=none}',
      'http_response_size_bytes{handler=none}',
      'http_request_duration_seconds{handler=none,method=GET}',
      'http_requests_total{handler=none,method=GET,status=4xx}',
      'http_request_size_bytes{handler=/stream}',
      'http_response_size_bytes{handler=/stream}',
      'http_request_duration_seconds{handler=/stream,method=GET}',
      'http_requests_total{handler=/stream,method=GET,status=2xx}',
    ]);
  });
});
