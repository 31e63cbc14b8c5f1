/**
 * The OpenAPI documents and the server's routes, walked together: a real server built by
 * createServer with the default model kinds (so every door's routes are mounted), each
 * listener's route table (what its 405s read) against its port's document, both ways: every
 * path and method the server routes is documented, and every documented operation is routed.
 * Then each port answers `GET /openapi.json` and `OPTIONS /` with exactly that document.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { createServer } from '../../../../frontend/main.js';
import type { TsServer } from '../../../../frontend/main.js';
import { defaultKinds } from '../../../../frontend/kinds/default-kinds.js';
import type { MetricsPort } from '../../../../frontend/models/metrics-port.js';
import type { AllowedMethods } from '../../../../frontend/http/allowed-methods.js';
import { inferenceDocument } from '../../../../frontend/openapi/inference-doc.js';
import { managementDocument } from '../../../../frontend/openapi/management-doc.js';
import { metricsDocument } from '../../../../frontend/openapi/metrics-doc.js';
import { openApiPaths } from '../../../../frontend/http/openapi/openapi-builder.js';
import { packageVersion } from '../../../../schema/config/stability.js';
import type { MetricsConfig } from '../../../../schema/types.js';
import { recordingLog } from '../../log/recording-log.js';

const CONFIG: MetricsConfig = {
  file: '',
  modes: [],
  autoDetect: false,
  metrics: [],
  statsd: { host: '127.0.0.1', port: 8125, prefix: '', tagStyle: 'datadog', histogramType: 'ms' },
  limits: { maxSeriesPerMetric: 100, maxPointsPerFlush: 100 },
};

const NO_METRICS: MetricsPort = {
  get: () => null,
  byKey: () => null,
  prometheusText: () => Promise.resolve(''),
  prometheusContentType: 'text/plain; version=0.0.4; charset=utf-8',
  modes: [],
  close: () => Promise.resolve(),
};

/** `METHOD path` of every routed path (OpenAPI paths; HEAD and OPTIONS-only answers left out as implied). */
function routed(allowed: AllowedMethods): string[] {
  const out: string[] = [];
  for (const [express, allow] of allowed)
    for (const m of allow.split(', ')) if (m !== 'HEAD') for (const p of openApiPaths(express)) out.push(`${m} ${p}`);
  return out.sort();
}

/** `METHOD path` of every documented operation, OPTIONS / included. */
function documented(doc: Record<string, unknown>): string[] {
  const out: string[] = ['OPTIONS /'];
  for (const [p, methods] of Object.entries(doc.paths as Record<string, object>))
    for (const m of Object.keys(methods)) out.push(`${m.toUpperCase()} ${p}`);
  return out.sort();
}

describe('the OpenAPI documents against the server routes (createServer, default kinds)', function () {
  this.timeout(30_000);
  let server: TsServer;
  let store: string;
  let logDir: string;
  const version = packageVersion();

  before(async () => {
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-openapi-'));
    logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-openapi-log-'));
    server = await createServer(
      {
        server: {
          inference: { host: '127.0.0.1', port: 0 },
          management: { host: '127.0.0.1', port: 0 },
          metrics: { host: '127.0.0.1', port: 0 },
          modelStore: store,
          models: 'all',
          logDir,
          enableTokenAuth: false,
          maxRequestSizeBytes: 1 << 20,
        },
        metrics: { config: CONFIG, configFile: '', systemIntervalSec: null },
      },
      {
        kinds: defaultKinds(),
        logger: { log: recordingLog([]) },
        metrics: { port: NO_METRICS, ingest: { handle: () => false, forget: () => undefined } },
      },
    );
  });
  after(async () => {
    await server?.stop();
    fs.rmSync(store, { recursive: true, force: true });
    fs.rmSync(logDir, { recursive: true, force: true });
  });

  for (const [port, doc] of [
    ['inference', inferenceDocument(version)],
    ['management', managementDocument(version)],
    ['metrics', metricsDocument(version)],
  ] as const) {
    it(`should document every route of the ${port} port and route every documented operation`, () => {
      const table = server.routes[port];
      expect(table, `${port} routes`).to.not.equal(undefined);
      expect(documented(doc)).to.deep.equal(routed(table!));
    });

    it(`should answer GET /openapi.json and OPTIONS / on the ${port} port with that document`, async () => {
      const base = server.urls[port];
      const get = await fetch(`${base}/openapi.json`);
      expect([get.status, get.headers.get('content-type')]).to.deep.equal([200, 'application/json; charset=utf-8']);
      expect(await get.json()).to.deep.equal(JSON.parse(JSON.stringify(doc)));
      const opt = await fetch(`${base}/`, { method: 'OPTIONS' });
      expect(opt.status).to.equal(200);
      expect(await opt.json()).to.deep.equal(JSON.parse(JSON.stringify(doc)));
      const page = await fetch(`${base}/docs`);
      expect([
        page.status,
        (await page.text()).includes(`<h1>${(doc.info as { title: string }).title} `),
      ]).to.deep.equal([200, true]);
    });
  }
});
