/**
 * A front's metrics travel as a worker's do: `FrontMetricsPort` pushes into a `PointBuffer` and
 * ships `MetricsMessage`s, `FrontRecords` hands them to the primary's `MetricsIngest`, and the
 * primary's `FrontendMetrics` renders them. Each test reads the exposition it produced.
 */
import { expect } from 'chai';
import * as os from 'node:os';
import type { Log } from '../../../frontend/log/log.js';
import type { AccessRecord } from '../../../frontend/log/log.js';
import { FrontMetricsPort, FRONT_METRICS } from '../../../frontend/cluster/front-port.js';
import { FrontRecords } from '../../../frontend/cluster/front-records.js';
import type { FrontMetrics } from '../../../frontend/cluster/messages.js';
import { FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { MetricsIngest } from '../../../frontend/metrics/ingest.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';
import type { MetricSpec } from '../../../schema/types.js';
import { makeConfig, makeSpec } from '../metrics/make-config.js';

const SPECS: readonly MetricSpec[] = [
  makeSpec('http_requests_total', 'counter', ['handler', 'method', 'status']),
  makeSpec('http_request_size_bytes', 'histogram', ['handler']),
  makeSpec('QueueTime', 'gauge', ['Level'], { merge: 'livesum' }),
  makeSpec('tsserve_requests_refused_total', 'counter', ['model_name', 'reason']),
  makeSpec('HandlerTime', 'gauge', ['ModelName'], { section: 'model_metrics' }),
];

const SILENT: Log = {
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  fatal: () => undefined,
  child: () => SILENT,
  isLevelEnabled: () => false,
};

/** The primary: its metrics, the one ingest, and the fronts' records in front of it. */
function primary(log: Log = SILENT, access?: (r: AccessRecord) => void) {
  const metrics = new FrontendMetrics(makeConfig(SPECS, { modes: ['prometheus'] }), {
    logDir: os.tmpdir(),
    hostname: 'h1',
    log: () => undefined,
  });
  const ingest = new MetricsIngest(metrics, { log: () => undefined });
  return { metrics, ingest, records: new FrontRecords(ingest, log, access) };
}

/** The sample lines of `names` (no comments). */
async function samples(metrics: FrontendMetrics, names: readonly string[]): Promise<string[]> {
  return (await metrics.prometheusText(names, 'text')).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

/** A front whose flushes are kept (a timer that never fires in a test). */
function front(specs: readonly MetricSpec[] = SPECS): { port: FrontMetricsPort; sent: FrontMetrics[] } {
  const sent: FrontMetrics[] = [];
  const port = new FrontMetricsPort(specs, ['prometheus'], (m) => void sent.push(structuredClone(m)), {
    flushMs: 60_000,
    nowMs: () => 1_700_000_000_000,
  });
  return { port, sent };
}

describe('FrontMetricsPort → FrontRecords → MetricsIngest', () => {
  it('should fold a front’s counter, histogram and gauge datapoints into the primary’s series, one message a flush', async () => {
    const { port, sent } = front();
    const ok = port.get('http_requests_total')!.bind({ handler: '/ping', method: 'GET', status: '2xx' });
    const size = port.get('http_request_size_bytes')!.bind({ handler: '/ping' });
    const busy = port.get('QueueTime')!.bind({ Level: 'Host' });
    ok.record(1);
    ok.record(1);
    ok.record(1);
    size.record(10);
    size.record(20);
    busy.record(3);
    busy.record(5);
    expect(port.get('not_declared')).to.equal(null);
    port.flush();
    port.flush(); // nothing new: nothing sent
    ok.record(1);
    await port.close();
    expect(sent.map((m) => m.metrics?.values.length)).to.deep.equal([7, 1]);
    const p = primary();
    for (const m of sent) p.records.handle('front-1', m);
    expect(await samples(p.metrics, ['http_requests_total', 'http_request_size_bytes', 'QueueTime'])).to.deep.equal([
      'http_requests_total{handler="/ping",method="GET",status="2xx"} 4',
      'http_request_size_bytes_bucket{le="1",handler="/ping"} 0',
      'http_request_size_bytes_bucket{le="10",handler="/ping"} 1',
      'http_request_size_bytes_bucket{le="+Inf",handler="/ping"} 2',
      'http_request_size_bytes_sum{handler="/ping"} 30',
      'http_request_size_bytes_count{handler="/ping"} 2',
      'QueueTime{Level="Host"} 5',
    ]);
    await p.metrics.close();
  });

  it('should take a gone front out of the gauges merged over live processes, and keep its counts', async () => {
    const { port, sent } = front();
    port.get('QueueTime')!.bind({ Level: 'Host' }).record(4);
    port.get('http_requests_total')!.bind({ handler: '/ping', method: 'GET', status: '2xx' }).record(2);
    await port.close();
    const p = primary();
    p.records.handle('front-1', sent[0]!);
    const before = await samples(p.metrics, ['QueueTime', 'http_requests_total']);
    p.records.forget('front-1');
    expect([before, await samples(p.metrics, ['QueueTime', 'http_requests_total'])]).to.deep.equal([
      ['QueueTime{Level="Host"} 4', 'http_requests_total{handler="/ping",method="GET",status="2xx"} 2'],
      ['http_requests_total{handler="/ping",method="GET",status="2xx"} 2'],
    ]);
    await p.metrics.close();
  });

  it('should carry access records and log lines to the primary, with a flush of no datapoint', async () => {
    const { port, sent } = front();
    const rec: AccessRecord = {
      listener: 'inference',
      port: 8080,
      method: 'GET',
      path: '/ping',
      status: 200,
      durationMs: 1.5,
      bytes: 20,
      requestId: 'r1',
    };
    port.accessRecord(rec);
    port.logLine('warn', 'something');
    await port.close();
    const lines: string[] = [];
    const log: Log = { ...SILENT, warn: (m) => void lines.push(`warn ${m}`) };
    const access: AccessRecord[] = [];
    primary(log, (r) => access.push(r)).records.handle('front-2', sent[0]!);
    expect([sent.map((m) => m.metrics), access, lines]).to.deep.equal([[null], [rec], ['warn front-2: something']]);
  });

  it('should count a front’s bind with other dimensions than declared in tsserve_datapoints_dropped_total{reason="bad_dimensions"}, once a record', async () => {
    const { port, sent } = front();
    const bad = port.get('http_requests_total')!.bind({ handler: '/ping' });
    bad.record(1);
    bad.record(1);
    await port.close();
    const p = primary();
    p.records.handle('front-1', sent[0]!);
    expect(
      (await samples(p.metrics, ['tsserve_datapoints_dropped_total'])).filter((l) => !l.endsWith(' 0')),
    ).to.deep.equal(['tsserve_datapoints_dropped_total{reason="bad_dimensions",Hostname="h1"} 2']);
    await p.metrics.close();
  });

  it('should refuse a front’s datapoint into a model metric as forbidden_metric, as a worker’s into a frontend one', async () => {
    const { port, sent } = front();
    port.get('HandlerTime')!.bind({ ModelName: 'mlp' }).record(1);
    await port.close();
    const p = primary();
    p.records.handle('front-1', sent[0]!);
    expect([
      await samples(p.metrics, ['HandlerTime']),
      (await samples(p.metrics, ['tsserve_datapoints_dropped_total'])).filter((l) => !l.endsWith(' 0')),
    ]).to.deep.equal([[], ['tsserve_datapoints_dropped_total{reason="forbidden_metric",Hostname="h1"} 1']]);
    await p.metrics.close();
  });

  it("should ship a front's own queue_full refusal (the Open Inference Protocol's all-or-none check) into tsserve_requests_refused_total", async () => {
    const specs = FRONT_METRICS.map((n) =>
      n === 'tsserve_requests_refused_total' ? SPECS[3]! : makeSpec(n, 'counter', []),
    );
    const { port, sent } = front(specs);
    new FrontendSeries(port).queueFullRefusals('mlp').record(1);
    port.flush();
    const p = primary();
    p.records.handle('front-1', sent[0]!);
    expect(await samples(p.metrics, ['tsserve_requests_refused_total'])).to.deep.equal([
      'tsserve_requests_refused_total{model_name="mlp",reason="queue_full",Hostname="h1"} 1',
    ]);
    await port.close();
    await p.metrics.close();
  });
});
