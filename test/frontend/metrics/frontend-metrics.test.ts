import { expect } from 'chai';
import * as dgram from 'node:dgram';
import * as os from 'node:os';
import { DROP_REASONS, FrontendMetrics } from '../../../frontend/metrics/frontend-metrics.js';
import { autoDetectedSpec } from '../../../frontend/metrics/ingest.js';
import { traceIds } from '../../../frontend/metrics/exposition/trace-ids.js';
import { seriesKey } from '../../../frontend/metrics/series-key.js';
import { captureLog, makeConfig, makeSpec } from './make-config.js';
import { until } from '../../support/until.js';

function make(maxSeries = 1000): { fm: FrontendMetrics; logs: string[] } {
  const { lines, log } = captureLog();
  const config = makeConfig(
    [
      makeSpec('Req', 'counter', ['Level', 'Code']),
      makeSpec('Depth', 'gauge', []),
      makeSpec('Lat', 'histogram', ['m'], { section: 'model_metrics', unit: 'ms' }),
    ],
    { modes: ['prometheus'], maxSeries },
  );
  return { fm: new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h', log }), logs: lines };
}

async function dropped(fm: FrontendMetrics): Promise<string> {
  return (await fm.prometheusText(['tsserve_datapoints_dropped_total']))
    .split('\n')
    .filter((l) => !l.startsWith('#') && l !== '')
    .join('\n');
}

describe('FrontendMetrics', () => {
  it('should drop bad datapoints with a reason, count them, warn once, and never throw', async () => {
    const { fm, logs } = make();
    const req = fm.get('Req')!;
    const bad = (): void => {
      req.addOrUpdate(Number.NaN, ['a', 'b']);
      req.addOrUpdate(Number.POSITIVE_INFINITY, ['a', 'b']);
      req.addOrUpdate('7' as unknown as number, ['a', 'b']);
      req.addOrUpdate(-1, ['a', 'b']);
      req.addOrUpdate(1, ['a']);
      req.addOrUpdate(1, ['a', 'b', 'c']);
      req.addOrUpdate(1, { Level: 'a', Code: 'b', Extra: 'c' });
      req.addOrUpdate(1, { Level: 'a', Hostname: 'h' });
      req.addOrUpdate(1, ['a', 2 as unknown as string]);
      req.addOrUpdate(1, { Level: 'a', Code: null as unknown as string });
      req.addOrUpdate(1, ['a', 'b'], 42 as unknown as string);
      fm.get('Depth')!.addOrUpdate(1, ['unexpected']);
      fm.get('Depth')!.bind().record(Number.NaN);
    };
    expect(bad).to.not.throw();
    expect(bad).to.not.throw();
    expect(await dropped(fm)).to.equal(
      [
        'tsserve_datapoints_dropped_total{reason="not_finite",Hostname="h"} 8',
        'tsserve_datapoints_dropped_total{reason="negative_counter",Hostname="h"} 2',
        'tsserve_datapoints_dropped_total{reason="bad_dimensions",Hostname="h"} 14',
        'tsserve_datapoints_dropped_total{reason="bad_request_id",Hostname="h"} 2',
      ].join('\n'),
    );
    expect(logs).to.deep.equal([
      'warn: metrics: dropped a datapoint of Req (not_finite); further drops like it are only counted in tsserve_datapoints_dropped_total',
      'warn: metrics: dropped a datapoint of Req (negative_counter); further drops like it are only counted in tsserve_datapoints_dropped_total',
      'warn: metrics: dropped a datapoint of Req (bad_dimensions); further drops like it are only counted in tsserve_datapoints_dropped_total',
      'warn: metrics: dropped a datapoint of Req (bad_request_id); further drops like it are only counted in tsserve_datapoints_dropped_total',
      'warn: metrics: dropped a datapoint of Depth (bad_dimensions); further drops like it are only counted in tsserve_datapoints_dropped_total',
      'warn: metrics: dropped a datapoint of Depth (not_finite); further drops like it are only counted in tsserve_datapoints_dropped_total',
    ]);
    expect(await fm.prometheusText(['Req'])).to.equal('# HELP Req Req (unit: Count)\n# TYPE Req counter\n');
  });

  it('should drop a counter datapoint that would make the total Infinity (counter_overflow), so no sink sends or shows Infinity', async () => {
    const udp = dgram.createSocket('udp4');
    const packets: string[] = [];
    udp.on('message', (b) => packets.push(...b.toString().split('\n')));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    const { lines, log } = captureLog();
    const config = makeConfig([makeSpec('ProbeItems', 'counter', [])], { modes: ['prometheus', 'statsd'] });
    const fm = new FrontendMetrics(config, {
      logDir: os.tmpdir(),
      hostname: 'h',
      log,
      statsd: { host: '127.0.0.1', port: udp.address().port },
      statsdFlushMs: 10,
    });
    try {
      const items = fm.get('ProbeItems')!;
      items.addOrUpdate(1e308);
      items.addOrUpdate(1e308);
      items.addOrUpdate(7e307);
      items.addOrUpdate(1e308);
      expect(await fm.prometheusText(['ProbeItems'])).to.equal(
        '# HELP ProbeItems ProbeItems (unit: Count)\n# TYPE ProbeItems counter\nProbeItems 1.7e+308\n',
      );
      expect(await dropped(fm)).to.equal('tsserve_datapoints_dropped_total{reason="counter_overflow",Hostname="h"} 2');
      expect(lines).to.deep.equal([
        'warn: metrics: dropped a datapoint of ProbeItems (counter_overflow); further drops like it are only counted in tsserve_datapoints_dropped_total',
      ]);
      // The sink sums a counter's records between flushes: one datagram, the kept total, never Infinity.
      await until(() => (packets.some((p) => p.startsWith('ProbeItems:')) ? true : null), {
        message: 'a ProbeItems packet',
      });
      expect(packets.filter((p) => p.startsWith('ProbeItems:'))).to.deep.equal([`ProbeItems:17${'0'.repeat(307)}|c`]);
    } finally {
      await fm.close();
      udp.close();
    }
  });

  it('should count drops reported by the ingest through self.dropped', async () => {
    const { fm, logs } = make();
    fm.self.dropped('malformed_message', 3);
    fm.self.dropped('unknown_metric', 1, 'Nope');
    fm.self.dropped('unknown_metric', 2, 'Nope');
    expect(await dropped(fm)).to.equal(
      [
        'tsserve_datapoints_dropped_total{reason="malformed_message",Hostname="h"} 3',
        'tsserve_datapoints_dropped_total{reason="unknown_metric",Hostname="h"} 3',
      ].join('\n'),
    );
    expect(logs).to.deep.equal([
      'warn: metrics: dropped a datapoint (malformed_message); further drops like it are only counted in tsserve_datapoints_dropped_total',
      'warn: metrics: dropped a datapoint of Nope (unknown_metric); further drops like it are only counted in tsserve_datapoints_dropped_total',
    ]);
    expect(DROP_REASONS).to.include.members([
      'not_finite',
      'negative_counter',
      'bad_dimensions',
      'unknown_metric',
      'type_mismatch',
      'malformed_message',
    ]);
  });

  it('should return metrics by type and null for undeclared or other types', () => {
    const { fm } = make();
    expect(fm.get('Req')!.spec.name).to.equal('Req');
    expect(fm.getCounter('Req')!.spec.type).to.equal('counter');
    expect(fm.getGauge('Req')).to.equal(null);
    expect(fm.getGauge('Depth')!.spec.type).to.equal('gauge');
    expect(fm.getHistogram('Lat')!.spec.type).to.equal('histogram');
    expect(fm.getCounter('Lat')).to.equal(null);
    expect(fm.get('Nope')).to.equal(null);
    expect(fm.getCounter('tsserve_datapoints_dropped_total')!.spec.dimensions).to.deep.equal(['reason']);
    expect(fm.modes).to.deep.equal(['prometheus']);
  });

  it('should bind a series once and reuse it for equal values given by name or position', () => {
    const { fm } = make();
    const req = fm.get('Req')!;
    const a = req.bind(['x', 'y']);
    expect(req.bind({ Code: 'y', Level: 'x' })).to.equal(a);
    expect(req.bind(['x', 'y'])).to.equal(a);
    expect(req.bind(['y', 'x'])).to.not.equal(a);
  });

  it('should register auto-detected metrics first-wins and refuse a conflicting shape', async () => {
    const { fm, logs } = make();
    const spec = makeSpec('AutoTime', 'gauge', ['ModelName'], { section: 'model_metrics', unit: 'Milliseconds' });
    const m = fm.register(spec)!;
    expect(m.spec).to.deep.equal(spec);
    expect(fm.register({ ...spec, help: 'other help' })).to.equal(m);
    expect(fm.register({ ...spec, type: 'counter' })).to.equal(null);
    expect(fm.register({ ...spec, dimensions: ['Other'] })).to.equal(null);
    expect(fm.register(makeSpec('Req', 'counter', ['Level']))).to.equal(null);
    m.addOrUpdate(4.5, ['mnist']);
    expect(await fm.prometheusText(['AutoTime'])).to.equal(
      '# HELP AutoTime AutoTime (unit: Milliseconds)\n# TYPE AutoTime gauge\nAutoTime{ModelName="mnist",Hostname="h"} 4.5\n',
    );
    expect(await dropped(fm)).to.equal(
      'tsserve_datapoints_dropped_total{reason="type_mismatch",Hostname="h"} 2\n' +
        'tsserve_datapoints_dropped_total{reason="forbidden_metric",Hostname="h"} 1',
    );
    expect(logs).to.deep.equal([
      'warn: metrics: dropped a datapoint of AutoTime (type_mismatch); further drops like it are only counted in tsserve_datapoints_dropped_total',
      'warn: metrics: dropped a datapoint of Req (forbidden_metric); further drops like it are only counted in tsserve_datapoints_dropped_total',
    ]);
  });

  it('should ignore a yaml entry that reuses a self-metric name, with a warning', () => {
    const { lines, log } = captureLog();
    const fm = new FrontendMetrics(makeConfig([makeSpec('tsserve_series', 'counter', [])], { modes: ['prometheus'] }), {
      logDir: os.tmpdir(),
      log,
    });
    expect(fm.get('tsserve_series')!.spec.type).to.equal('gauge');
    expect(lines).to.deep.equal([
      'warn: metrics: tsserve_series is a built-in self-metric or already declared; the yaml entry is ignored',
    ]);
  });

  it('should refuse an auto-detected metric whose exposition names clash with another metric (invalid_name)', async () => {
    // Regression: a worker's auto-detected gauge Lat_count (or counter Req_total) was admitted,
    // and the scrape held a second family for one name, which promtool and Prometheus refuse.
    const { fm } = make();
    const auto = (name: string, type: 'counter' | 'gauge' | 'histogram') =>
      autoDetectedSpec({ name, type, unit: 'Count', dimensions: [] });
    expect(fm.admit(auto('Lat_count', 'gauge'))).to.deep.equal({
      reason: 'invalid_name',
      why: 'Lat_count cannot be auto-detected: its name "Lat_count" is also the _count series of histogram "Lat" in the Prometheus exposition, where a scrape fails on a name two families claim; rename one of them',
    });
    expect(fm.admit(auto('Req_total', 'counter'))).to.deep.equal({
      reason: 'invalid_name',
      why: 'Req_total cannot be auto-detected: its name "Req_total" is also the OpenMetrics _total series of counter "Req" in the Prometheus exposition, where a scrape fails on a name two families claim; rename one of them',
    });
    expect(fm.register(auto('Depth', 'histogram'))).to.equal(null); // a frontend metric: forbidden_metric, as before
    expect(fm.register(auto('Lat_sum', 'counter'))).to.equal(null);
    const fresh = fm.register(auto('Fresh', 'counter'));
    expect([fresh === null, fm.get('Fresh') === fresh]).to.deep.equal([false, true]);
    expect(fm.admit(auto('Fresh_total', 'gauge'))).to.deep.equal({
      reason: 'invalid_name', // an admitted one claims its names too
      why: 'Fresh_total cannot be auto-detected: its name "Fresh_total" is also the OpenMetrics _total series of counter "Fresh" in the Prometheus exposition, where a scrape fails on a name two families claim; rename one of them',
    });
    expect(await dropped(fm)).to.equal(
      [
        'tsserve_datapoints_dropped_total{reason="forbidden_metric",Hostname="h"} 1',
        'tsserve_datapoints_dropped_total{reason="invalid_name",Hostname="h"} 1',
      ].join('\n'),
    );
  });

  it('should keep series counts in tsserve_series, the overflow series included', async () => {
    const { fm } = make(2);
    for (const v of ['1', '2', '3', '4']) fm.get('Req')!.addOrUpdate(1, [v, 'x']);
    const text = await fm.prometheusText(['tsserve_series']);
    // Req: two own series and the overflow series; the self-metrics count their own series too.
    expect(text).to.equal(
      [
        '# HELP tsserve_series Live series per metric in the frontend metrics cache (unit: Count)',
        '# TYPE tsserve_series gauge',
        'tsserve_series{metric="tsserve_datapoints_dropped_total",Hostname="h"} 15',
        'tsserve_series{metric="tsserve_series",Hostname="h"} 6',
        'tsserve_series{metric="tsserve_flush_batches_total",Hostname="h"} 1',
        'tsserve_series{metric="tsserve_flush_datapoints_total",Hostname="h"} 1',
        'tsserve_series{metric="Req",Hostname="h"} 3',
        'tsserve_series{metric="tsserve_series_overflow_total",Hostname="h"} 1',
        '',
      ].join('\n'),
    );
  });

  it('should count the trace id table\'s evictions in tsserve_cache_evictions_total{cache="trace_ids"} until it closes', async () => {
    // Whatever earlier tests left, 4096 new ids fill the process-wide table before this cache counts.
    for (let i = 0; i < 4096; i++) traceIds.set(`fill-${i}`, '4bf92f3577b34da6a3ce929d0e0e4736');
    const fm = new FrontendMetrics(makeConfig([], { modes: ['prometheus'] }), {
      logDir: os.tmpdir(),
      hostname: 'h1',
      log: captureLog().log,
    });
    const evictions = async (): Promise<string[]> =>
      (await fm.prometheusText(['tsserve_cache_evictions_total']))
        .split('\n')
        .filter((l) => l.startsWith('tsserve_cache_evictions_total{'));
    expect(await evictions()).to.deep.equal([]); // no series until the table evicts
    for (let i = 0; i < 3; i++) traceIds.set(`new-${i}`, '4bf92f3577b34da6a3ce929d0e0e4736');
    traceIds.set('new-2', '00f067aa0ba902b74bf92f3577b34da6'); // an update evicts nothing
    expect(await evictions()).to.deep.equal(['tsserve_cache_evictions_total{cache="trace_ids",Hostname="h1"} 3']);
    await fm.close();
    traceIds.set('after-close', '4bf92f3577b34da6a3ce929d0e0e4736');
    expect(await evictions()).to.deep.equal(['tsserve_cache_evictions_total{cache="trace_ids",Hostname="h1"} 3']);
  });
});

describe('seriesKey', () => {
  it('should never collide for values containing separators', () => {
    const tuples = [
      ['x|', ''],
      ['x', '|'],
      ['x,b:y', ''],
      ['x', 'y,b:'],
      ['1:a', ''],
      ['', '1:a'],
      ['1:', 'a'],
      ['x'],
      ['', 'x'],
    ];
    const keys = new Set(tuples.map(seriesKey));
    expect(keys.size).to.equal(tuples.length);
    expect(seriesKey([])).to.equal('');
  });
});
