/**
 * OpenMetrics and exemplars end to end: the real server answers Prometheus's Accept header with
 * OpenMetrics, a generation request's histograms and counters carry its request id and W3C
 * trace id as exemplars, and a real Prometheus (exemplar storage on) returns them from
 * `/api/v1/query_exemplars`.
 */
import { expect } from 'chai';
import { spawn } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { tinyLmVariants } from './generation-helpers.js';
import { freePort, haveBinary, removeStores, startTsserve, tempDir } from './harness.js';
import type { Tsserve } from './harness.js';
import { until } from '../support/until.js';

const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

interface ExemplarAnswer {
  readonly status: string;
  readonly data: ReadonlyArray<{
    seriesLabels: Record<string, string>;
    exemplars: ReadonlyArray<{ labels: Record<string, string>; value: string }>;
  }>;
}

describe('tsserve start (OpenMetrics and exemplars)', function () {
  let dir = '';
  let server: Tsserve | undefined;
  let requestId = '';

  before(async () => {
    dir = tempDir('exemplars');
    const store = tinyLmVariants(path.join(dir, 'store'), { 'tiny-lm': {} });
    fs.mkdirSync(path.join(dir, 'logs'));
    server = await startTsserve({
      store,
      args: ['--metrics-mode', 'prometheus', '--disable-system-metrics'],
      logDir: path.join(dir, 'logs'),
    });
    const res = await fetch(`${server.inference}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: TRACEPARENT },
      body: JSON.stringify({ model: 'tiny-lm', prompt: 'hello world', max_tokens: 4 }),
    });
    expect(res.status).to.equal(200);
    await res.json();
    requestId = res.headers.get('x-request-id') ?? '';
    expect(requestId).to.match(/^tiny-lm-[0-9a-f-]{36}$/);
  });

  after(() => {
    server?.kill();
    fs.rmSync(dir, { recursive: true, force: true });
    removeStores();
  });

  it("should answer Prometheus's Accept header with OpenMetrics carrying the request's exemplars, and a plain GET with the text format", async () => {
    const om = await until(
      async () => {
        const res = await fetch(`${server!.metrics}/metrics`, { headers: { accept: PROMETHEUS_ACCEPT } });
        const text = await res.text();
        return text.includes(`request_id="${requestId}"`) ? { type: res.headers.get('content-type'), text } : null;
      },
      { message: 'the exemplar of the request' },
    );
    expect(om.type).to.equal('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(om.text.endsWith('\n# EOF\n')).to.equal(true);
    const exemplar = ` # {request_id="${requestId}",trace_id="${TRACE_ID}"} `;
    const e2e = om.text
      .split('\n')
      .filter((l) => l.startsWith('ts_e2e_request_latency_seconds_bucket{') && l.includes(exemplar));
    expect(e2e.length).to.equal(1);
    expect(om.text).to.contain('# TYPE ts_request_success counter\n');
    const success = om.text
      .split('\n')
      .filter((l) => l.startsWith('ts_request_success_total{') && l.includes(exemplar));
    expect(success.length).to.equal(1);
    expect(om.text).to.contain('# UNIT ts_e2e_request_latency_seconds seconds\n');

    const plain = await fetch(`${server!.metrics}/metrics`);
    expect(plain.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
    const text = await plain.text();
    expect(text).to.not.contain('# EOF');
    expect(text).to.not.contain(' # {');
  });

  it('should have a real Prometheus (exemplar storage on) return our request id from /api/v1/query_exemplars', async function () {
    if (!haveBinary('prometheus')) {
      console.warn(
        'SKIPPED: prometheus not found — install the Debian package `prometheus` (apt-get install -y prometheus)',
      );
      this.skip();
    }
    const promDir = path.join(dir, 'prom');
    fs.mkdirSync(promDir);
    const port = await freePort();
    fs.writeFileSync(
      path.join(promDir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        'scrape_configs:',
        '  - job_name: tsserve',
        '    static_configs:',
        `      - targets: ['${server!.metrics.replace('http://', '')}']`,
        '',
      ].join('\n'),
    );
    const prom = spawn(
      'prometheus',
      [
        `--config.file=${path.join(promDir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(promDir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--enable-feature=exemplar-storage',
      ],
      { stdio: 'ignore', detached: true },
    );
    try {
      const now = Math.floor(Date.now() / 1000);
      const q = `query=${encodeURIComponent('ts_e2e_request_latency_seconds_bucket')}&start=${now - 3600}&end=${now + 3600}`;
      const found = await until(
        async () => {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/api/v1/query_exemplars?${q}`);
            const body = (await res.json()) as ExemplarAnswer;
            const all = (body.data ?? []).flatMap((s) =>
              s.exemplars.map((e) => ({ series: s.seriesLabels, labels: e.labels })),
            );
            const ours = all.filter((e) => e.labels.request_id === requestId);
            return ours.length > 0 ? ours : null;
          } catch {
            return null;
          }
        },
        { message: 'Prometheus to store our exemplar', timeoutMs: 60_000 },
      );
      expect(found.map((e) => e.labels)).to.deep.equal([{ request_id: requestId, trace_id: TRACE_ID }]);
      expect(found[0]!.series.__name__).to.equal('ts_e2e_request_latency_seconds_bucket');
      expect(found[0]!.series.model_name).to.equal('tiny-lm');
      // It scraped OpenMetrics (exemplars travel in no other format) without a parse error.
      const targets = (await (await fetch(`http://127.0.0.1:${port}/api/v1/targets`)).json()) as {
        data: { activeTargets: Array<{ health: string; lastError: string }> };
      };
      expect(targets.data.activeTargets.map((t) => [t.health, t.lastError])).to.deep.equal([['up', '']]);
    } finally {
      try {
        process.kill(-(prom.pid as number), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  });
});
