import { expect } from 'chai';
import type { MetricSpec } from '../../../schema/types.js';
import type { Log } from '../../../frontend/log/log.js';
import type { AccessRecord } from '../../../frontend/log/log.js';
import type { MetricHandle, MetricsPort } from '../../../frontend/models/metrics-port.js';
import { FrontIngest } from '../../../frontend/cluster/front-ingest.js';
import type { FrontMetrics } from '../../../frontend/cluster/messages.js';
import { FRONT_METRICS, ShippedMetrics } from '../../../frontend/cluster/shipped-metrics.js';
import { FrontendSeries } from '../../../frontend/models/frontend-series.js';

function spec(name: string, type: MetricSpec['type'], dimensions: readonly string[]): MetricSpec {
  return {
    name,
    section: 'ts_metrics',
    type,
    unit: 'Count',
    dimensions,
    hostLabel: 'Hostname',
    help: '',
    buckets: [],
    pos: null,
  };
}

const SPECS = [
  spec('http_requests_total', 'counter', ['handler', 'method', 'status']),
  spec('http_request_size_bytes', 'histogram', ['handler']),
  spec('Busy', 'gauge', []),
];
/** The primary's self-metric (never a front's: fronts get the frontend families only). */
const DROPPED = spec('tsserve_datapoints_dropped_total', 'counter', ['reason']);
const REFUSED = spec('tsserve_requests_refused_total', 'counter', ['model_name', 'reason']);

/** The primary's metrics port as a recorder: every record as `name{dims} value [source]`. */
function recordingPort(): { port: MetricsPort; records: string[] } {
  const records: string[] = [];
  const port: MetricsPort = {
    get: (name): MetricHandle | null => {
      const s = [...SPECS, DROPPED, REFUSED].find((x) => x.name === name);
      if (s === undefined) return null;
      return {
        spec: s,
        bind: (dims) => ({
          record: (v: number, _r?: string, _t?: number, source?: string) => {
            records.push(`${name}${JSON.stringify(dims)} ${v}${source !== undefined ? ` ${source}` : ''}`);
          },
        }),
      };
    },
    byKey: () => null,
    prometheusText: () => Promise.resolve(''),
    prometheusContentType: '',
    modes: ['prometheus'],
    close: () => Promise.resolve(),
    processGone: (source) => {
      records.push(`gone ${source}`);
    },
  };
  return { port, records };
}

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

describe('ShippedMetrics → FrontIngest', () => {
  it('should ship counters as sums, histograms as observations and gauges as last values, each once', async () => {
    const sent: FrontMetrics[] = [];
    const front = new ShippedMetrics(SPECS, ['prometheus'], (m) => sent.push(m), 60_000);
    const ok = front.get('http_requests_total')!.bind({ handler: '/ping', method: 'GET', status: '2xx' });
    const size = front.get('http_request_size_bytes')!.bind({ handler: '/ping' });
    const busy = front.get('Busy')!.bind({});
    ok.record(1);
    ok.record(1);
    ok.record(1);
    size.record(10);
    size.record(20);
    busy.record(3);
    busy.record(5);
    expect(front.get('not_declared')).to.equal(null);
    front.flush();
    front.flush(); // nothing new: nothing sent
    ok.record(1);
    await front.close();
    expect(sent.length).to.equal(2);
    const { port, records } = recordingPort();
    const access: AccessRecord[] = [];
    const ingest = new FrontIngest(port, SILENT, (r) => access.push(r));
    for (const m of sent) ingest.handle('front-1', m);
    expect(records).to.deep.equal([
      'http_requests_total{"handler":"/ping","method":"GET","status":"2xx"} 3',
      'Busy{} 5 front-1',
      'http_request_size_bytes{"handler":"/ping"} 10',
      'http_request_size_bytes{"handler":"/ping"} 20',
      'http_requests_total{"handler":"/ping","method":"GET","status":"2xx"} 1',
    ]);
  });

  it("should retire a gone front from the gauges merged over live processes, and bind its next incarnation afresh (regression: a dead front's values stayed in them)", async () => {
    const sent: FrontMetrics[] = [];
    const front = new ShippedMetrics(SPECS, ['prometheus'], (m) => sent.push(m), 60_000);
    front.get('Busy')!.bind({}).record(4);
    await front.close();
    const { port, records } = recordingPort();
    const ingest = new FrontIngest(port, SILENT, undefined);
    ingest.handle('front-1', sent[0]!);
    ingest.forget('front-1');
    // A late flush under the same key (none comes after the channel closed) binds a new table.
    ingest.handle('front-1', sent[0]!);
    expect(records).to.deep.equal(['Busy{} 4 front-1', 'gone front-1', 'Busy{} 4 front-1']);
  });

  it('should carry access records and log lines to the primary with the next flush', async () => {
    const sent: FrontMetrics[] = [];
    const front = new ShippedMetrics(SPECS, ['prometheus'], (m) => sent.push(m), 60_000);
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
    front.accessRecord(rec);
    front.logLine('warn', 'something');
    await front.close();
    const lines: string[] = [];
    const log: Log = {
      ...SILENT,
      warn: (m) => {
        lines.push(`warn ${m}`);
      },
    };
    const access: AccessRecord[] = [];
    new FrontIngest(recordingPort().port, log, (r) => access.push(r)).handle('front-2', sent[0]!);
    expect([access, lines]).to.deep.equal([[rec], ['warn front-2: something']]);
  });

  it('should count the observations a front dropped for a full flush in tsserve_datapoints_dropped_total{reason="queue_full"} (regression: summed into a field nothing read)', () => {
    const { port, records } = recordingPort();
    const ingest = new FrontIngest(port, SILENT, undefined);
    const flush = (dropped: number): FrontMetrics => ({
      type: 'tsserve.front.metrics',
      decls: [],
      counters: new Float64Array(0),
      gauges: new Float64Array(0),
      observations: [],
      dropped,
      access: [],
      logs: [],
    });
    ingest.handle('front-1', flush(0));
    ingest.handle('front-1', flush(3));
    ingest.handle('front-2', flush(2));
    expect(records).to.deep.equal([
      'tsserve_datapoints_dropped_total{"reason":"queue_full"} 3',
      'tsserve_datapoints_dropped_total{"reason":"queue_full"} 2',
    ]);
  });

  it("should ship a front's own queue_full refusal (the Open Inference Protocol's all-or-none check) into tsserve_requests_refused_total (regression: a no-op, the family was not a front's)", () => {
    const specs = FRONT_METRICS.map((n) => (n === REFUSED.name ? REFUSED : spec(n, 'counter', [])));
    const sent: FrontMetrics[] = [];
    const front = new ShippedMetrics(specs, [], (m) => sent.push(m), 60_000);
    new FrontendSeries(front).queueFullRefusals('mlp').record(1);
    front.flush();
    const { port, records } = recordingPort();
    for (const m of sent) new FrontIngest(port, SILENT, undefined).handle('front-1', m);
    expect(records).to.deep.equal(['tsserve_requests_refused_total{"model_name":"mlp","reason":"queue_full"} 1']);
  });
});
