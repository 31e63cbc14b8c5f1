/**
 * The inference app with token auth on, over no models: which paths a request without the
 * bearer key may reach, with exact answers.
 */
import { expect } from 'chai';
import * as http from 'http';
import type { AddressInfo } from 'net';
import { inferenceApp } from '../../../frontend/http/inference-app.js';
import { FrontendSeries } from '../../../frontend/server/frontend-series.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/server/metrics-port.js';

/** Metrics off: every series a no-op. */
const NO_METRICS: MetricsPort = {
  prometheusContentType: 'text/plain', modes: [],
  get: (): MetricHandle | null => null, byKey: (): MetricHandle | null => null,
  prometheusText: () => Promise.resolve(''), close: () => Promise.resolve(),
};

const DENIED = { code: 401, type: 'InvalidKeyException', message: 'Token Authorization failed. Token either incorrect, expired, or not provided correctly' };

describe('inferenceApp with token auth', () => {
  let server: http.Server;
  let base = '';

  before(async () => {
    const listener = inferenceApp({ lookup: () => undefined, list: () => [], series: new FrontendSeries(NO_METRICS), maxRequestSizeBytes: 1 << 20, token: 'k3y' });
    server = http.createServer(listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  async function get(path: string, key?: string): Promise<{ status: number; body: string }> {
    const r = await fetch(`${base}${path}`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
    return { status: r.status, body: await r.text() };
  }

  it('should answer the probes without a key, the Open Inference Protocol\'s server liveness and readiness included (regression: 401, so the shipped Kubernetes probes failed)', async () => {
    expect(await get('/ping')).to.deep.equal({ status: 200, body: '{"status":"Healthy"}' });
    expect(await get('/health')).to.deep.equal({ status: 200, body: '' });
    expect(await get('/v2/health/live')).to.deep.equal({ status: 200, body: '' });
    expect(await get('/v2/health/ready')).to.deep.equal({ status: 200, body: '' });
  });

  it('should still require the key on the rest of the protocol', async () => {
    expect(await get('/v2')).to.deep.equal({ status: 401, body: JSON.stringify(DENIED) });
    expect(await get('/v2/models/mlp/ready')).to.deep.equal({ status: 401, body: JSON.stringify(DENIED) });
    expect(await get('/v2/models/mlp/ready', 'k3y')).to.deep.equal({ status: 404, body: '{"error":"Model not found: mlp"}' });
    expect(await get('/v2', 'wrong')).to.deep.equal({ status: 401, body: JSON.stringify(DENIED) });
  });
});
