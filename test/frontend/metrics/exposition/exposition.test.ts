import { expect } from 'chai';
import * as os from 'node:os';
import { FrontendMetrics } from '../../../../frontend/metrics/frontend-metrics.js';
import { traceIds } from '../../../../frontend/metrics/exposition/trace-ids.js';
import type { ForeignFamily } from '../../../../frontend/metrics/exposition/foreign-family.js';
import { openMetricsForeign } from '../../../../frontend/metrics/exposition/openmetrics-renderer.js';
import { textForeign } from '../../../../frontend/metrics/exposition/text-renderer.js';
import { captureLog, makeConfig, makeSpec } from '../make-config.js';

const T = 1689613225016;
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';

/** One declared family of each type (plus a counter named without `_total`), no self-metrics in the output. */
function families(): FrontendMetrics {
  const config = makeConfig(
    [
      makeSpec('ts_requests_total', 'counter', ['model'], {
        hostLabel: 'Hostname',
        help: 'Requests "quoted" \\ back\nslash',
      }),
      makeSpec('Requests2XX', 'counter', ['Level']),
      makeSpec('ts_queue_size', 'gauge', ['model'], { merge: 'livesum' }),
      makeSpec('ts_latency_seconds', 'histogram', ['model'], { unit: 'Seconds', buckets: [0.1, 1], help: 'Latency' }),
    ],
    { modes: ['prometheus'] },
  );
  const fm = new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log });
  traceIds.set('req-traced', TRACE);
  const req = fm.get('ts_requests_total')!;
  req.bind(['a"b\\c\nd']).record(2, 'req-1', T);
  req.bind(['mlp']).record(1, 'req-traced', T + 1000);
  fm.get('Requests2XX')!.bind(['Host']).record(1);
  fm.get('ts_queue_size')!.bind(['mlp']).record(3);
  const lat = fm.get('ts_latency_seconds')!.bind(['mlp']);
  lat.record(0.05, 'req-1', T);
  lat.record(0.5, 'req-traced', T + 500);
  lat.record(0.07);
  lat.record(7, 'req-2', T + 2000);
  return fm;
}

const NAMES = ['ts_requests_total', 'Requests2XX', 'ts_queue_size', 'ts_latency_seconds'];

describe('Exposition', () => {
  it('should render the declared families in the text format 0.0.4 exactly (escaping, no exemplars)', async () => {
    const fm = families();
    expect(await fm.prometheusText(NAMES, 'text')).to.equal(
      [
        '# HELP ts_requests_total Requests "quoted" \\\\ back\\nslash (unit: Count)',
        '# TYPE ts_requests_total counter',
        'ts_requests_total{model="a\\"b\\\\c\\nd",Hostname="h1"} 2',
        'ts_requests_total{model="mlp",Hostname="h1"} 1',
        '',
        '# HELP Requests2XX Requests2XX (unit: Count)',
        '# TYPE Requests2XX counter',
        'Requests2XX{Level="Host"} 1',
        '',
        '# HELP ts_queue_size ts_queue_size (unit: Count)',
        '# TYPE ts_queue_size gauge',
        'ts_queue_size{model="mlp"} 3',
        '',
        '# HELP ts_latency_seconds Latency (unit: Seconds)',
        '# TYPE ts_latency_seconds histogram',
        'ts_latency_seconds_bucket{le="0.1",model="mlp"} 2',
        'ts_latency_seconds_bucket{le="1",model="mlp"} 3',
        'ts_latency_seconds_bucket{le="+Inf",model="mlp"} 4',
        'ts_latency_seconds_sum{model="mlp"} 7.62',
        'ts_latency_seconds_count{model="mlp"} 4',
        '',
      ].join('\n'),
    );
    await fm.close();
  });

  it('should render them in OpenMetrics 1.0 exactly (_total once, UNIT, exemplars with request and trace ids, le canonical, EOF)', async () => {
    const fm = families();
    expect(await fm.prometheusText(NAMES, 'openmetrics')).to.equal(
      [
        '# HELP ts_requests Requests \\"quoted\\" \\\\ back\\nslash (unit: Count)',
        '# TYPE ts_requests counter',
        'ts_requests_total{model="a\\"b\\\\c\\nd",Hostname="h1"} 2 # {request_id="req-1"} 2 1689613225.016',
        `ts_requests_total{model="mlp",Hostname="h1"} 1 # {request_id="req-traced",trace_id="${TRACE}"} 1 1689613226.016`,
        '# HELP Requests2XX Requests2XX (unit: Count)',
        '# TYPE Requests2XX counter',
        'Requests2XX_total{Level="Host"} 1',
        '# HELP ts_queue_size ts_queue_size (unit: Count)',
        '# TYPE ts_queue_size gauge',
        'ts_queue_size{model="mlp"} 3',
        '# HELP ts_latency_seconds Latency (unit: Seconds)',
        '# TYPE ts_latency_seconds histogram',
        '# UNIT ts_latency_seconds seconds',
        'ts_latency_seconds_bucket{le="0.1",model="mlp"} 2 # {request_id="req-1"} 0.05 1689613225.016',
        `ts_latency_seconds_bucket{le="1.0",model="mlp"} 3 # {request_id="req-traced",trace_id="${TRACE}"} 0.5 1689613225.516`,
        'ts_latency_seconds_bucket{le="+Inf",model="mlp"} 4 # {request_id="req-2"} 7 1689613227.016',
        'ts_latency_seconds_sum{model="mlp"} 7.62',
        'ts_latency_seconds_count{model="mlp"} 4',
        '# EOF',
        '',
      ].join('\n'),
    );
    await fm.close();
  });

  it('should render two series for the separator-collision case in both formats', async () => {
    const fm = new FrontendMetrics(makeConfig([makeSpec('C', 'counter', ['a', 'b'])], { modes: ['prometheus'] }), {
      logDir: os.tmpdir(),
      hostname: 'h1',
      log: captureLog().log,
    });
    fm.get('C')!.addOrUpdate(1, { a: 'x|', b: '' });
    fm.get('C')!.addOrUpdate(10, { a: 'x', b: '|' });
    fm.get('C')!.addOrUpdate(100, { a: 'x,b:y', b: '' });
    fm.get('C')!.addOrUpdate(1000, { a: 'x', b: 'y,b:' });
    expect(await fm.prometheusText(['C'], 'openmetrics')).to.equal(
      [
        '# HELP C C (unit: Count)',
        '# TYPE C counter',
        'C_total{a="x|",b=""} 1',
        'C_total{a="x",b="|"} 10',
        'C_total{a="x,b:y",b=""} 100',
        'C_total{a="x",b="y,b:"} 1000',
        '# EOF',
        '',
      ].join('\n'),
    );
    await fm.close();
  });

  it('should keep the exemplar label set within 128 characters (a batch keeps its first request id)', async () => {
    const fm = new FrontendMetrics(makeConfig([makeSpec('B_total', 'counter', [])], { modes: ['prometheus'] }), {
      logDir: os.tmpdir(),
      hostname: 'h1',
      log: captureLog().log,
    });
    const ids = Array.from({ length: 4 }, (_x, i) => `${i}`.repeat(36));
    traceIds.set(ids.join(','), TRACE);
    fm.get('B_total')!.bind().record(1, ids.join(','), T);
    expect(await fm.prometheusText(['B_total'], 'openmetrics')).to.equal(
      [
        '# HELP B B_total (unit: Count)',
        '# TYPE B counter',
        `B_total 1 # {request_id="${ids[0]}",trace_id="${TRACE}"} 1 1689613225.016`,
        '# EOF',
        '',
      ].join('\n'),
    );
    await fm.close();
  });

  it('should render a family without labels at 0 before any record, as prom-client did', async () => {
    const fm = new FrontendMetrics(
      makeConfig([makeSpec('G', 'gauge', []), makeSpec('H', 'histogram', [], { buckets: [1] })], {
        modes: ['prometheus'],
      }),
      { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log },
    );
    expect(await fm.prometheusText(['G', 'H'])).to.equal(
      [
        '# HELP G G (unit: Count)',
        '# TYPE G gauge',
        'G 0',
        '',
        '# HELP H H (unit: Count)',
        '# TYPE H histogram',
        'H_bucket{le="1"} 0',
        'H_bucket{le="+Inf"} 0',
        'H_sum 0',
        'H_count 0',
        '',
      ].join('\n'),
    );
    await fm.close();
  });

  it('should leave _sum out of an OpenMetrics histogram with a negative bucket or observation (a strict parser refused the scrape)', async () => {
    // OpenMetrics 1.0: Sum is a counter, so never negative; with negative thresholds a histogram
    // MUST NOT expose it, and Count is there if and only if Sum is. prometheus_client's parser
    // refused the whole scrape on `Neg_sum -5`.
    const fm = new FrontendMetrics(
      makeConfig(
        [makeSpec('Neg', 'histogram', [], { buckets: [-1, 0] }), makeSpec('Pos', 'histogram', ['m'], { buckets: [1] })],
        { modes: ['prometheus'] },
      ),
      { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log },
    );
    fm.get('Neg')!.addOrUpdate(2);
    const pos = fm.get('Pos')!;
    pos.addOrUpdate(0.5, ['a']);
    pos.addOrUpdate(-5, ['b']);
    pos.addOrUpdate(9, ['b']);
    expect(await fm.prometheusText(['Neg', 'Pos'], 'openmetrics')).to.equal(
      [
        '# HELP Neg Neg (unit: Count)',
        '# TYPE Neg histogram',
        'Neg_bucket{le="-1.0"} 0',
        'Neg_bucket{le="0.0"} 0',
        'Neg_bucket{le="+Inf"} 1',
        '# HELP Pos Pos (unit: Count)',
        '# TYPE Pos histogram',
        'Pos_bucket{le="1.0",m="a"} 1',
        'Pos_bucket{le="+Inf",m="a"} 1',
        'Pos_sum{m="a"} 0.5',
        'Pos_count{m="a"} 1',
        // Once a series saw a negative value its sum is no counter (it went down), even back above 0.
        'Pos_bucket{le="1.0",m="b"} 1',
        'Pos_bucket{le="+Inf",m="b"} 2',
        '# EOF',
        '',
      ].join('\n'),
    );
    // The text format 0.0.4 has no such rule: _sum and _count stay there.
    expect((await fm.prometheusText(['Neg', 'Pos'])).split('\n').filter((l) => /_(sum|count)/.test(l))).to.deep.equal([
      'Neg_sum 2',
      'Neg_count 1',
      'Pos_sum{m="a"} 0.5',
      'Pos_count{m="a"} 1',
      'Pos_sum{m="b"} 4',
      'Pos_count{m="b"} 2',
    ]);
    await fm.close();
  });
});

describe('Exposition with process metrics', () => {
  it("should append prom-client's process families after ours, counters named once with _total in OpenMetrics", async () => {
    const fm = new FrontendMetrics(makeConfig([makeSpec('C', 'counter', [])], { modes: ['prometheus'] }), {
      logDir: os.tmpdir(),
      hostname: 'h1',
      log: captureLog().log,
      processMetrics: true,
    });
    const om = await fm.prometheusText(undefined, 'openmetrics');
    const lines = om.split('\n');
    expect(lines.indexOf('# TYPE C counter')).to.be.lessThan(lines.indexOf('# TYPE process_cpu_user_seconds counter'));
    expect(om).to.contain('\nprocess_cpu_user_seconds_total ');
    expect(om).to.contain('\n# UNIT process_cpu_user_seconds seconds\n');
    expect(lines.filter((l) => /^# TYPE \S+_total counter$/.test(l))).to.deep.equal([]);
    expect(om.endsWith('\n# EOF\n')).to.equal(true);
    expect(om.split('# EOF').length).to.equal(2);
    const text = await fm.prometheusText(['process_cpu_user_seconds_total']);
    expect(text).to.match(
      /^# HELP process_cpu_user_seconds_total Total user CPU time spent in seconds\.\n# TYPE process_cpu_user_seconds_total counter\nprocess_cpu_user_seconds_total \d+(\.\d+)?\n$/,
    );
    await fm.close();
  });

  it('should write prom-client\'s bucket bounds canonically in OpenMetrics (le="1.0"; the text format keeps le="1")', () => {
    const gc: ForeignFamily = {
      name: 'nodejs_gc_duration_seconds',
      help: 'GC',
      type: 'histogram',
      samples: [
        { name: 'nodejs_gc_duration_seconds_bucket', block: '{le="0.001",kind="major",pid="7"}', value: 0 },
        { name: 'nodejs_gc_duration_seconds_bucket', block: '{le="1",kind="major",pid="7"}', value: 1 },
        { name: 'nodejs_gc_duration_seconds_bucket', block: '{le="+Inf",kind="major",pid="7"}', value: 1 },
        { name: 'nodejs_gc_duration_seconds_sum', block: '{kind="major",pid="7"}', value: 0.5 },
        { name: 'nodejs_gc_duration_seconds_count', block: '{kind="major",pid="7"}', value: 1 },
      ],
    };
    expect(
      openMetricsForeign(gc)
        .split('\n')
        .filter((l) => !l.startsWith('#')),
    ).to.deep.equal([
      'nodejs_gc_duration_seconds_bucket{le="0.001",kind="major",pid="7"} 0',
      'nodejs_gc_duration_seconds_bucket{le="1.0",kind="major",pid="7"} 1',
      'nodejs_gc_duration_seconds_bucket{le="+Inf",kind="major",pid="7"} 1',
      'nodejs_gc_duration_seconds_sum{kind="major",pid="7"} 0.5',
      'nodejs_gc_duration_seconds_count{kind="major",pid="7"} 1',
    ]);
    expect(textForeign(gc)).to.contain('\nnodejs_gc_duration_seconds_bucket{le="1",kind="major",pid="7"} 1\n');
  });
});
