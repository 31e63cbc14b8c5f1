/**
 * The status page's data route, `/status.json`, served before express on the management
 * listener: the answers the management app's chain gave it (count, HTTP metrics, token, body
 * bounds) and its own (`since`, the rate limit), byte for byte, over a real node server and
 * the real metrics cache on the repo's metrics.yaml.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { managementApp } from '../../../frontend/http/management-app.js';
import { RateLimit, STATUS_CSP, statusRoutes } from '../../../frontend/http/status-routes.js';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { DEFAULT_BODY_LIMITS } from '../../../frontend/models/body-limits.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { ModelManager } from '../../../frontend/models/model-manager.js';
import { StatusSampler } from '../../../frontend/status/status-sampler.js';
import { loadMetricsConfig } from '../../../schema/config/load.js';
import { rawExchange, withoutDate } from '../../support/raw-http.js';

const DENIED =
  '{"code":401,"type":"InvalidKeyException","message":"Token Authorization failed. Token either incorrect, expired, or not provided correctly"}';
const BAD_SINCE =
  '{"code":400,"type":"BadRequestException","message":"parameter since must be a whole number of epoch seconds (at most 12 digits)"}';

describe('status-routes: /status.json before express, as the management chain answered it', () => {
  let dir: string;
  let fm: FrontendMetrics;
  let server: http.Server;
  let base = '';
  let clockMs = 1_800_000_000_000;
  let describeThrows = false;

  async function start(token?: string): Promise<void> {
    const loaded = loadMetricsConfig(path.join(import.meta.dirname, '..', '..', '..', '..', 'metrics.yaml'));
    if (!loaded.ok) throw new Error('metrics.yaml did not load');
    fm = new FrontendMetrics(loaded.config, { logDir: dir, modes: ['prometheus'], log: () => {} });
    const sampler = new StatusSampler({
      describe: () => {
        if (describeThrows) throw new Error('the model table could not be read');
        return [];
      },
      cells: fm.cells(),
      familyName: (key) => fm.byKey(key)?.spec.name ?? null,
      modes: fm.modes,
      version: '9.9.9',
      nowMs: () => clockMs,
    });
    const limit = new RateLimit(20, () => clockMs);
    const app = managementApp({
      manager: { list: () => [] } as unknown as ModelManager,
      series: new FrontendSeries(fm),
      bodyLimits: { ...DEFAULT_BODY_LIMITS, maxBytes: 64 },
      status: (ctx) => statusRoutes(sampler, ctx, limit),
      ...(token !== undefined ? { token } : {}),
    });
    server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** The exposition's `http_requests_total` samples of the management port, and Requests2XX/4XX. */
  async function counted(): Promise<string[]> {
    const text = await fm.prometheusText(['http_requests_total', 'Requests2XX', 'Requests4XX', 'Requests5XX']);
    return text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  }

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-status-routes-'));
    describeThrows = false;
  });

  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await fm.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it("should answer the sampler's snapshot with the page's headers, and count it under handler /status.json", async () => {
    await start();
    const r = await fetch(`${base}/status.json`);
    const body = (await r.json()) as { version: string; models: unknown[]; time: string; sampleIntervalS: number };
    expect([r.status, r.headers.get('content-type'), r.headers.get('cache-control')]).to.deep.equal([
      200,
      'application/json; charset=utf-8',
      'no-store',
    ]);
    expect([r.headers.get('content-security-policy'), r.headers.get('x-content-type-options')]).to.deep.equal([
      STATUS_CSP,
      'nosniff',
    ]);
    expect([body.version, body.models, body.time, body.sampleIntervalS]).to.deep.equal([
      '9.9.9',
      [],
      new Date(clockMs).toISOString(),
      1,
    ]);
    const head = await fetch(`${base}/status.json/`, { method: 'HEAD' });
    expect([head.status, await head.text()]).to.deep.equal([200, '']);
    expect(await counted()).to.deep.equal([
      'http_requests_total{handler="/status.json",method="GET",status="2xx"} 1',
      'http_requests_total{handler="/status.json",method="HEAD",status="2xx"} 1',
      'Requests2XX{Level="Host",Hostname="' + os.hostname() + '"} 2',
    ]);
  });

  it('should refuse a since that is not one whole number of at most 12 digits (400), and keep one that is', async () => {
    await start();
    for (const q of ['since=abc', 'since=', 'since=1&since=2', `since=${'9'.repeat(13)}`]) {
      const r = await fetch(`${base}/status.json?${q}`);
      expect([q, r.status, await r.text()]).to.deep.equal([q, 400, BAD_SINCE]);
    }
    const r = await fetch(`${base}/status.json?since=${Math.round(clockMs / 1000)}&other=1`);
    const body = (await r.json()) as { charts: { requestsPerS: unknown[] } };
    expect([r.status, body.charts.requestsPerS]).to.deep.equal([200, []]);
  });

  it('should answer 20 requests in a second and 429 the 21st with retry-after, then answer again a second later', async () => {
    await start();
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await fetch(`${base}/status.json`)).status);
    const refused = await fetch(`${base}/status.json`);
    expect([statuses, refused.status, refused.headers.get('retry-after'), await refused.text()]).to.deep.equal([
      Array<number>(20).fill(200),
      429,
      '1',
      '{"code":429,"type":"TooManyRequestsException","message":"/status.json answers at most 20 requests a second; try again in 1 s"}',
    ]);
    clockMs += 1000;
    expect((await fetch(`${base}/status.json`)).status).to.equal(200);
  });

  it('should answer 401 without the key (counted under handler none, as express recorded it) and 200 with it', async () => {
    await start('k3y');
    const denied = await fetch(`${base}/status.json`, { headers: { authorization: 'Bearer wrong' } });
    expect([denied.status, await denied.text()]).to.deep.equal([401, DENIED]);
    const ok = await fetch(`${base}/status.json`, { headers: { authorization: 'Bearer k3y' } });
    expect(ok.status).to.equal(200);
    expect(await counted()).to.deep.equal([
      'http_requests_total{handler="none",method="GET",status="4xx"} 1',
      'http_requests_total{handler="/status.json",method="GET",status="2xx"} 1',
      'Requests2XX{Level="Host",Hostname="' + os.hostname() + '"} 1',
      'Requests4XX{Level="Host",Hostname="' + os.hostname() + '"} 1',
    ]);
  });

  it("should read and drop a GET's body within the bounds, and refuse one past them (413) without answering the route", async () => {
    await start();
    const small = await rawExchange(base, {
      send: 'GET /status.json HTTP/1.1\r\nHost: localhost\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello',
    });
    expect(withoutDate(small).split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
    const big = await rawExchange(base, {
      send: `GET /status.json HTTP/1.1\r\nHost: localhost\r\ncontent-length: 100\r\nconnection: close\r\n\r\n${'x'.repeat(100)}`,
    });
    const msg =
      '{"code":413,"type":"RequestEntityTooLargeException","message":"request body exceeds the limit of 64 bytes (--max-request-size)"}';
    expect(withoutDate(big)).to.equal(
      `HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${msg.length}\r\nConnection: close\r\n\r\n${msg}`,
    );
  });

  it('should answer 500 naming the failure when the sampler throws, and keep serving', async () => {
    await start();
    describeThrows = true;
    const r = await fetch(`${base}/status.json`);
    expect([r.status, await r.text()]).to.deep.equal([
      500,
      '{"code":500,"type":"InternalServerException","message":"the model table could not be read"}',
    ]);
    describeThrows = false;
    expect((await fetch(`${base}/status.json`)).status).to.equal(200);
  });
});
