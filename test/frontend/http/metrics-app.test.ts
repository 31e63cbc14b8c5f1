import { expect } from 'chai';
import type { AddressInfo } from 'node:net';
import * as http from 'node:http';
import * as os from 'node:os';
import { metricsApp, metricNamesFilter } from '../../../frontend/http/metrics-app.js';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { captureLog, makeConfig, makeSpec } from '../metrics/make-config.js';

describe('metricNamesFilter', () => {
  it('should read name[] and name, keep an empty name (it selects nothing) and refuse other bracketed forms', () => {
    expect(metricNamesFilter('/metrics')).to.deep.equal({ names: undefined });
    expect(metricNamesFilter('/metrics?name[]=A&name%5B%5D=B&name=C')).to.deep.equal({ names: ['A', 'B', 'C'] });
    expect(metricNamesFilter('/metrics?name[]=')).to.deep.equal({ names: [''] });
    expect(metricNamesFilter('/metrics?name[0]=Requests2XX')).to.deep.equal({
      error: 'parameter name[0] is not understood: use name[]=NAME, once per metric',
    });
    expect(metricNamesFilter('/metrics?name[]=A&name[][x]=B')).to.deep.equal({
      error: 'parameter name[][x] is not understood: use name[]=NAME, once per metric',
    });
  });
});

describe('metricsApp ?name[]=', () => {
  let server: http.Server;
  let base: string;
  let fm: FrontendMetrics;
  before(async () => {
    fm = new FrontendMetrics(
      makeConfig([makeSpec('Requests2XX', 'counter', [], { help: 'OK answers' })], { modes: ['prometheus'] }),
      { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log },
    );
    fm.get('Requests2XX')!.addOrUpdate(2);
    server = http.createServer(metricsApp(fm));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await fm.close();
  });

  const get = async (qs: string): Promise<[number, string]> => {
    const r = await fetch(`${base}/metrics${qs}`);
    return [r.status, await r.text()];
  };

  it('should answer an empty 200 for an empty or unknown name, as for any name that selects no family', async () => {
    expect(await get('?name[]=')).to.deep.equal([200, '']);
    expect(await get('?name[]=nope')).to.deep.equal([200, '']);
  });

  it('should answer only the named family', async () => {
    expect(await get('?name[]=Requests2XX')).to.deep.equal([
      200,
      '# HELP Requests2XX OK answers (unit: Count)\n# TYPE Requests2XX counter\nRequests2XX 2\n',
    ]);
  });

  it('should answer 400 naming a malformed name parameter instead of the full exposition', async () => {
    expect(await get('?name[0]=Requests2XX')).to.deep.equal([
      400,
      JSON.stringify({
        code: 400,
        type: 'BadRequestException',
        message: 'parameter name[0] is not understood: use name[]=NAME, once per metric',
      }),
    ]);
    expect(await get('?name[][x]=Requests2XX')).to.deep.equal([
      400,
      JSON.stringify({
        code: 400,
        type: 'BadRequestException',
        message: 'parameter name[][x] is not understood: use name[]=NAME, once per metric',
      }),
    ]);
  });

  it('should answer 405 with Allow: GET, HEAD to another method on /metrics (it was a 404 saying the path does not exist)', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const r = await fetch(`${base}/metrics/x`, { method });
      expect([method, r.status, r.headers.get('allow'), await r.text()]).to.deep.equal([
        method,
        405,
        'GET, HEAD',
        JSON.stringify({
          code: 405,
          type: 'MethodNotAllowedException',
          message: 'Requested method is not allowed, please refer to API document.',
        }),
      ]);
    }
    const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-type')]).to.deep.equal([
      200,
      'text/plain; version=0.0.4; charset=utf-8',
    ]);
    expect((await fetch(`${base}/nope`, { method: 'POST' })).status).to.equal(404);
  });

  it('should count what is not a scrape on this port (a 405, a 404) but never a GET or HEAD of /metrics', async () => {
    const own = new FrontendMetrics(
      makeConfig([makeSpec('http_requests_total', 'counter', ['handler', 'method', 'status'])], {
        modes: ['prometheus'],
      }),
      { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log },
    );
    const srv = http.createServer(metricsApp(own));
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
    try {
      for (const [method, path] of [
        ['GET', '/metrics'],
        ['HEAD', '/metrics/x'],
        ['POST', '/metrics'],
        ['POST', '/metrics/x'],
        ['DELETE', '/metrics'],
        ['GET', '/nope'],
      ]) {
        await (await fetch(url + (path as string), { method })).arrayBuffer();
      }
      expect(await own.prometheusText(['http_requests_total'])).to.equal(
        '# HELP http_requests_total http_requests_total (unit: Count)\n# TYPE http_requests_total counter\n' +
          'http_requests_total{handler="/metrics",method="POST",status="4xx"} 2\n' +
          'http_requests_total{handler="/metrics",method="DELETE",status="4xx"} 1\n' +
          'http_requests_total{handler="none",method="GET",status="4xx"} 1\n',
      );
    } finally {
      await new Promise((resolve) => srv.close(resolve));
      await own.close();
    }
  });
});

describe('metricsApp when rendering fails', () => {
  it('should answer 500 naming the failure, so the scrape fails (a 200 with a comment left up at 1 and every series stale)', async () => {
    const fm = new FrontendMetrics(makeConfig([makeSpec('Requests2XX', 'counter', [])], { modes: ['prometheus'] }), {
      logDir: os.tmpdir(),
      hostname: 'h1',
      log: captureLog().log,
    });
    // The sink's render fails (a collector that throws): FrontendMetrics passes the failure on, not a 200 with a comment.
    (fm as unknown as { prometheus: { render(): Promise<string> } }).prometheus.render = () =>
      Promise.reject(new Error('collector broke'));
    const server = http.createServer(metricsApp(fm));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`);
      expect([r.status, await r.json()]).to.deep.equal([
        500,
        { code: 500, type: 'InternalServerException', message: 'could not render metrics: Error: collector broke' },
      ]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await fm.close();
    }
  });
});
