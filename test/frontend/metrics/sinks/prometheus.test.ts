import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MetricsConfig } from '../../../../schema/types.js';
import { parseMetricsConfig } from '../../../../schema/config/load.js';
import { FrontendMetrics } from '../../../../frontend/metrics/frontend-metrics.js';
import { captureLog, makeConfig, makeSpec } from '../make-config.js';

function promFor(config: MetricsConfig): FrontendMetrics {
  return new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h1', log: captureLog().log });
}

const SMALL = makeConfig(
  [
    makeSpec('Requests2XX', 'counter', ['Level'], { hostLabel: 'Hostname', help: 'HTTP 2xx responses' }),
    makeSpec('QueueDepth', 'gauge', []),
    makeSpec('HandlerTime', 'histogram', ['ModelName'], { section: 'model_metrics', unit: 'ms', buckets: [1, 10] }),
  ],
  { modes: ['prometheus'] },
);

const SELF_TEXT = (series: Readonly<Record<string, number>>): string =>
  [
    '# HELP tsserve_datapoints_dropped_total Datapoints dropped instead of recorded, by reason (unit: Count)',
    '# TYPE tsserve_datapoints_dropped_total counter',
    '',
    '# HELP tsserve_series Live series per metric in the frontend metrics cache (unit: Count)',
    '# TYPE tsserve_series gauge',
    ...Object.entries(series).map(([m, n]) => `tsserve_series{metric="${m}",Hostname="h1"} ${n}`),
    '',
    '# HELP tsserve_series_overflow_total Binds of a new series folded into the overflow series because the metric reached limits.maxSeriesPerMetric (unit: Count)',
    '# TYPE tsserve_series_overflow_total counter',
    '',
    '# HELP tsserve_flush_batches_total Metric flush batches received from workers (unit: Count)',
    '# TYPE tsserve_flush_batches_total counter',
    '',
    '# HELP tsserve_flush_datapoints_total Datapoints received from workers in flush batches (unit: Count)',
    '# TYPE tsserve_flush_datapoints_total counter',
    '',
    '# HELP tsserve_sink_errors_total Deliveries a sink failed to make (statsd: datagram sends; the datapoints a failed datagram carried are lost; tslog: metric lines lost) (unit: Count)',
    '# TYPE tsserve_sink_errors_total counter',
    '',
    '# HELP tsserve_worker_restarts_total Workers that exited unexpectedly (a crash, a kill, a failed or timed-out load), per model; each is replaced after a backoff (unit: Count)',
    '# TYPE tsserve_worker_restarts_total counter',
    '',
    '# HELP tsserve_front_restarts_total Front processes of --api-server-count that exited unexpectedly, or were killed for leaving 3 heartbeats unanswered, and were started again (unit: Count)',
    '# TYPE tsserve_front_restarts_total counter',
    '',
    '# HELP tsserve_requests_refused_total Requests answered 503 because a bounded queue was full (reason queue_full: a batching queue, a generation engine or a pipeline stage at --job-queue-size) (unit: Count)',
    '# TYPE tsserve_requests_refused_total counter',
    '',
    "# HELP tsserve_worker_output_faults_total Worker output the frontend did not take as sent, per model, by reason: malformed_result (a batch result of the wrong shape or with too few responses), extra_response (each response beyond the batch's requests), unknown_batch (a result for no batch in flight), log_line_truncated (a worker stdout/stderr line cut at 64 KiB), stdio_held (a worker that exited handled as gone after 1 s while a process it started held its stdout and stderr) (unit: Count)",
    '# TYPE tsserve_worker_output_faults_total counter',
    '',
    '# HELP tsserve_log_errors_total Log file failures, by file (ts_log.log, access_log.log, ts_metrics.log, model_metrics.log) and reason (rotation_failed: a size rotation that failed, the file written on and the rotation tried again at most once a minute; lines_lost: lines of ts_log.log or access_log.log not written, a full buffer or a failed write; lost metric log lines are in tsserve_sink_errors_total) (unit: Count)',
    '# TYPE tsserve_log_errors_total counter',
    '',
    '# HELP tsserve_cache_evictions_total Entries a bounded in-memory table evicted at its bound, by cache (trace_ids: request id to W3C trace id for exemplars, 4096 entries, the oldest evicted; a datapoint of an evicted request keeps its exemplar without a trace_id) (unit: Count)',
    '# TYPE tsserve_cache_evictions_total counter',
    '',
    "# HELP tsserve_spans_dropped_total Trace spans this process lost, by reason (queue_full: a finished span found the batch span processor's queue at OTEL_BSP_MAX_QUEUE_SIZE, default 2048; export_failed: the spans of an OTLP export the collector did not take) (unit: Count)",
    '# TYPE tsserve_spans_dropped_total counter',
  ].join('\n');

describe('PrometheusSink', () => {
  it('should render the full exposition of a small config exactly', async () => {
    const fm = promFor(SMALL);
    fm.get('Requests2XX')!.addOrUpdate(1, ['Host']);
    fm.get('Requests2XX')!.addOrUpdate(2, { Level: 'Host' });
    fm.get('QueueDepth')!.addOrUpdate(4);
    const h = fm.get('HandlerTime')!.bind(['mnist']);
    h.record(0.5);
    h.record(5);
    h.record(50);
    const text = await fm.prometheusText();
    expect(text).to.equal(
      SELF_TEXT({
        tsserve_datapoints_dropped_total: 15,
        tsserve_series: 7,
        tsserve_flush_batches_total: 1,
        tsserve_flush_datapoints_total: 1,
        Requests2XX: 1,
        QueueDepth: 1,
        HandlerTime: 1,
      }) +
        '\n\n' +
        [
          '# HELP Requests2XX HTTP 2xx responses (unit: Count)',
          '# TYPE Requests2XX counter',
          'Requests2XX{Level="Host",Hostname="h1"} 3',
          '',
          '# HELP QueueDepth QueueDepth (unit: Count)',
          '# TYPE QueueDepth gauge',
          'QueueDepth 4',
          '',
          '# HELP HandlerTime HandlerTime (unit: ms)',
          '# TYPE HandlerTime histogram',
          'HandlerTime_bucket{le="1",ModelName="mnist",Hostname="h1"} 1',
          'HandlerTime_bucket{le="10",ModelName="mnist",Hostname="h1"} 2',
          'HandlerTime_bucket{le="+Inf",ModelName="mnist",Hostname="h1"} 3',
          'HandlerTime_sum{ModelName="mnist",Hostname="h1"} 55.5',
          'HandlerTime_count{ModelName="mnist",Hostname="h1"} 3',
          '',
        ].join('\n'),
    );
    expect(fm.prometheusContentType).to.equal('text/plain; version=0.0.4; charset=utf-8');
    await fm.close();
  });

  it('should print HELP and TYPE for every declared family before any sample', async () => {
    const fm = promFor(SMALL);
    const text = await fm.prometheusText();
    const families: string[] = [];
    const seen = new Set<string>();
    for (const line of text.split('\n')) {
      const m = /^# (HELP|TYPE) (\S+) /.exec(line);
      if (m !== null) {
        seen.add(`${m[1]} ${m[2]}`);
        if (m[1] === 'HELP') families.push(m[2] as string);
      } else if (line !== '') {
        const name = /^([A-Za-z_:][A-Za-z0-9_:]*?)(_bucket|_sum|_count)?[{ ]/.exec(line)![1] as string;
        expect(seen.has(`HELP ${name}`) && seen.has(`TYPE ${name}`), line).to.equal(true);
      }
    }
    expect(families).to.deep.equal([
      'tsserve_datapoints_dropped_total',
      'tsserve_series',
      'tsserve_series_overflow_total',
      'tsserve_flush_batches_total',
      'tsserve_flush_datapoints_total',
      'tsserve_sink_errors_total',
      'tsserve_worker_restarts_total',
      'tsserve_front_restarts_total',
      'tsserve_requests_refused_total',
      'tsserve_worker_output_faults_total',
      'tsserve_log_errors_total',
      'tsserve_cache_evictions_total',
      'tsserve_spans_dropped_total',
      'Requests2XX',
      'QueueDepth',
      'HandlerTime',
    ]);
  });

  it('should filter families by name[] and render nothing for unknown names', async () => {
    const fm = promFor(SMALL);
    fm.get('Requests2XX')!.addOrUpdate(1, ['Host']);
    fm.get('QueueDepth')!.addOrUpdate(-2.5);
    expect(await fm.prometheusText(['QueueDepth', 'nope', 'Requests2XX', 'QueueDepth'])).to.equal(
      [
        '# HELP QueueDepth QueueDepth (unit: Count)',
        '# TYPE QueueDepth gauge',
        'QueueDepth -2.5',
        '',
        '# HELP Requests2XX HTTP 2xx responses (unit: Count)',
        '# TYPE Requests2XX counter',
        'Requests2XX{Level="Host",Hostname="h1"} 1',
        '',
      ].join('\n'),
    );
    expect(await fm.prometheusText(['nope'])).to.equal('');
  });

  it('should take sample names in name[] as prometheus_client does (HandlerTime_bucket, Requests2XX_total selected nothing)', async () => {
    const fm = promFor(SMALL);
    fm.get('Requests2XX')!.addOrUpdate(1, ['Host']);
    fm.get('HandlerTime')!.addOrUpdate(5, ['mlp']);
    const head = '# HELP HandlerTime HandlerTime (unit: ms)\n# TYPE HandlerTime histogram';
    expect(await fm.prometheusText(['HandlerTime_bucket'])).to.equal(
      `${head}\nHandlerTime_bucket{le="1",ModelName="mlp",Hostname="h1"} 0\nHandlerTime_bucket{le="10",ModelName="mlp",Hostname="h1"} 1\nHandlerTime_bucket{le="+Inf",ModelName="mlp",Hostname="h1"} 1\n`,
    );
    // Two sample names of one family render it once, where it was first asked, in its own order.
    expect(await fm.prometheusText(['HandlerTime_count', 'QueueDepth', 'HandlerTime_sum'])).to.equal(
      `${head}\nHandlerTime_sum{ModelName="mlp",Hostname="h1"} 5\nHandlerTime_count{ModelName="mlp",Hostname="h1"} 1\n\n# HELP QueueDepth QueueDepth (unit: Count)\n# TYPE QueueDepth gauge\nQueueDepth 0\n`,
    );
    expect(await fm.prometheusText(['HandlerTime_sum', 'HandlerTime'])).to.equal(
      await fm.prometheusText(['HandlerTime']),
    );
    // A counter's OpenMetrics names (family Requests2XX, sample Requests2XX_total; family
    // tsserve_series_overflow, sample tsserve_series_overflow_total) select it in either format.
    const counter = '# HELP Requests2XX HTTP 2xx responses (unit: Count)\n# TYPE Requests2XX counter';
    expect(await fm.prometheusText(['Requests2XX_total'])).to.equal(
      `${counter}\nRequests2XX{Level="Host",Hostname="h1"} 1\n`,
    );
    expect(await fm.prometheusText(['Requests2XX_total'], 'openmetrics')).to.equal(
      `${counter}\nRequests2XX_total{Level="Host",Hostname="h1"} 1\n# EOF\n`,
    );
    expect(await fm.prometheusText(['tsserve_series_overflow'], 'openmetrics')).to.equal(
      await fm.prometheusText(['tsserve_series_overflow_total'], 'openmetrics'),
    );
    expect(await fm.prometheusText(['HandlerTime_total', 'QueueDepth_count', 'Requests2XX_bucket'])).to.equal('');
  });

  it('should take sample names of the process families too (nodejs_gc_duration_seconds_count, process_cpu_seconds)', async () => {
    const fm = new FrontendMetrics(SMALL, {
      logDir: os.tmpdir(),
      hostname: 'h1',
      log: captureLog().log,
      processMetrics: true,
    });
    const text = await fm.prometheusText([
      'nodejs_gc_duration_seconds_count',
      'process_cpu_seconds',
      'process_start_time_seconds_bucket',
    ]);
    await fm.close();
    const lines = text.split('\n');
    expect(lines.filter((l) => l.startsWith('#'))).to.deep.equal([
      '# HELP nodejs_gc_duration_seconds Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
      '# TYPE nodejs_gc_duration_seconds histogram',
      '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
      '# TYPE process_cpu_seconds_total counter',
    ]);
    const samples = lines.filter((l) => l !== '' && !l.startsWith('#')).map((l) => l.replace(/[{ ].*/, ''));
    expect(samples.filter((n) => n !== 'nodejs_gc_duration_seconds_count')).to.deep.equal([
      'process_cpu_seconds_total',
    ]);
  });

  it('should name the unit once in the HELP of a metric declared without help (it rendered twice)', async () => {
    const r = parseMetricsConfig(
      'mode: prometheus\nmodel_metrics:\n  gauge:\n    - name: ProbeSizeGauge\n      unit: kB\n      dimensions: []\n',
      '',
    );
    if (!r.ok) throw new Error(JSON.stringify(r.problems));
    const fm = promFor(r.config);
    fm.get('ProbeSizeGauge')!.addOrUpdate(3);
    const help = async (format: 'text' | 'openmetrics'): Promise<string[]> =>
      (await fm.prometheusText(['ProbeSizeGauge'], format)).split('\n').filter((l) => l.startsWith('# HELP'));
    expect(await help('text')).to.deep.equal(['# HELP ProbeSizeGauge ProbeSizeGauge (unit: kB)']);
    expect(await help('openmetrics')).to.deep.equal(['# HELP ProbeSizeGauge ProbeSizeGauge (unit: kB)']);
  });

  it('should put labels in yaml order with the host label last', async () => {
    const fm = promFor(
      makeConfig([makeSpec('Lat', 'counter', ['zeta', 'alpha', 'mid'], { hostLabel: 'hostname' })], {
        modes: ['prometheus'],
      }),
    );
    fm.get('Lat')!.addOrUpdate(1, { alpha: 'a', mid: 'm', zeta: 'z' });
    expect(await fm.prometheusText(['Lat'])).to.equal(
      '# HELP Lat Lat (unit: Count)\n# TYPE Lat counter\nLat{zeta="z",alpha="a",mid="m",hostname="h1"} 1\n',
    );
  });

  it('should fold series beyond maxSeriesPerMetric into one overflow series and count them', async () => {
    const fm = promFor(makeConfig([makeSpec('Req', 'counter', ['a', 'b'])], { modes: ['prometheus'], maxSeries: 2 }));
    const req = fm.get('Req')!;
    req.addOrUpdate(1, ['1', 'x']);
    req.addOrUpdate(1, ['2', 'x']);
    req.addOrUpdate(5, ['3', 'x']);
    req.addOrUpdate(7, ['4', 'x']);
    req.addOrUpdate(1, ['1', 'x']);
    expect(await fm.prometheusText(['Req', 'tsserve_series_overflow_total'])).to.equal(
      [
        '# HELP Req Req (unit: Count)',
        '# TYPE Req counter',
        'Req{a="1",b="x"} 2',
        'Req{a="2",b="x"} 1',
        'Req{a="__overflow__",b="__overflow__"} 12',
        '',
        SELF_TEXT({}).split('\n').slice(6, 8).join('\n'),
        'tsserve_series_overflow_total{metric="Req",Hostname="h1"} 2',
        '',
      ].join('\n'),
    );
    expect(await fm.prometheusText(['tsserve_series'])).to.contain('tsserve_series{metric="Req",Hostname="h1"} 3\n');
  });

  it('should keep values containing separators apart (separator-collision case)', async () => {
    const fm = promFor(makeConfig([makeSpec('C', 'counter', ['a', 'b'])], { modes: ['prometheus'] }));
    const c = fm.get('C')!;
    c.addOrUpdate(1, { a: 'x|', b: '' });
    c.addOrUpdate(10, { a: 'x', b: '|' });
    // These two collide under prom-client's own `k:v,` key: both are "a:x,b:y,b:,".
    c.addOrUpdate(100, { a: 'x,b:y', b: '' });
    c.addOrUpdate(1000, { a: 'x', b: 'y,b:' });
    c.addOrUpdate(1, { a: 'x', b: 'y,b:' });
    expect(await fm.prometheusText(['C'])).to.equal(
      [
        '# HELP C C (unit: Count)',
        '# TYPE C counter',
        'C{a="x|",b=""} 1',
        'C{a="x",b="|"} 10',
        'C{a="x,b:y",b=""} 100',
        'C{a="x",b="y,b:"} 1001',
        '',
      ].join('\n'),
    );
    expect(await fm.prometheusText(['tsserve_series'])).to.contain('tsserve_series{metric="C",Hostname="h1"} 4\n');
  });

  it('should escape only backslash, newline and double quote in a label value, writing NUL, tab and ESC as the format allows', async () => {
    const fm = promFor(makeConfig([makeSpec('C', 'counter', ['a'])], { modes: ['prometheus'] }));
    fm.get('C')!.addOrUpdate(1, ['a\u0000b\tc\u001bd\u007fe\r"\\\n']);
    fm.get('C')!.addOrUpdate(2, ['ab\tc\u001bd\u007fe\r"\\\n']);
    // Both text formats take any UTF-8 in a label value, NUL included (Prometheus' lexer keeps it).
    const expected = ['C{a="a\u0000b\tc\u001bd\u007fe\r\\"\\\\\\n"} 1', 'C{a="ab\tc\u001bd\u007fe\r\\"\\\\\\n"} 2'];
    expect((await fm.prometheusText(['C'])).split('\n').slice(2, 4)).to.deep.equal(expected);
    expect((await fm.prometheusText(['C'], 'openmetrics')).split('\n').slice(2, 4)).to.deep.equal(
      expected.map((l) => l.replace('C{', 'C_total{')),
    );
  });

  it('should keep colliding gauge and histogram series apart as well', async () => {
    const fm = promFor(
      makeConfig([makeSpec('G', 'gauge', ['a', 'b']), makeSpec('H', 'histogram', ['a', 'b'], { buckets: [1] })], {
        modes: ['prometheus'],
      }),
    );
    fm.get('G')!.addOrUpdate(1, ['x,b:y', '']);
    fm.get('G')!.addOrUpdate(2, ['x', 'y,b:']);
    fm.get('G')!.addOrUpdate(3, ['x', 'y,b:']);
    fm.get('H')!.addOrUpdate(0.5, ['x,b:y', '']);
    fm.get('H')!.addOrUpdate(0.5, ['x', 'y,b:']);
    fm.get('H')!.addOrUpdate(5, ['x', 'y,b:']);
    expect(await fm.prometheusText(['G', 'H'])).to.equal(
      [
        '# HELP G G (unit: Count)',
        '# TYPE G gauge',
        'G{a="x,b:y",b=""} 1',
        'G{a="x",b="y,b:"} 3',
        '',
        '# HELP H H (unit: Count)',
        '# TYPE H histogram',
        'H_bucket{le="1",a="x,b:y",b=""} 1',
        'H_bucket{le="+Inf",a="x,b:y",b=""} 1',
        'H_sum{a="x,b:y",b=""} 0.5',
        'H_count{a="x,b:y",b=""} 1',
        'H_bucket{le="1",a="x",b="y,b:"} 1',
        'H_bucket{le="+Inf",a="x",b="y,b:"} 2',
        'H_sum{a="x",b="y,b:"} 5.5',
        'H_count{a="x",b="y,b:"} 2',
        '',
      ].join('\n'),
    );
  });

  it('should leave out a process family whose name a declared metric takes, so the scrape still parses', async () => {
    // Regression: a yaml gauge process_open_fds rendered beside prom-client's: "second HELP line
    // for metric name", and the whole scrape was refused.
    const { lines, log } = captureLog();
    const config = makeConfig(
      [makeSpec('process_open_fds', 'gauge', []), makeSpec('nodejs_active_handles', 'counter', [])],
      { modes: ['prometheus'] },
    );
    const fm = new FrontendMetrics(config, { logDir: os.tmpdir(), hostname: 'h1', log, processMetrics: true });
    fm.get('process_open_fds')!.addOrUpdate(7);
    fm.get('nodejs_active_handles')!.addOrUpdate(2);
    const text = await fm.prometheusText();
    await fm.prometheusText(undefined, 'openmetrics'); // warned once per family, not per scrape
    await fm.close();
    const typeLines = text.split('\n').filter((l) => /^# TYPE (process_open_fds|nodejs_active_handles)/.test(l));
    expect(typeLines).to.deep.equal(['# TYPE process_open_fds gauge', '# TYPE nodejs_active_handles counter']);
    expect(text.split('\n').filter((l) => /^(process_open_fds|nodejs_active_handles)/.test(l))).to.deep.equal([
      'process_open_fds 7',
      'nodejs_active_handles 2',
    ]);
    expect(text).to.contain('\n# TYPE process_max_fds gauge\n'); // the other process families stay
    expect(lines).to.deep.equal([
      'warn: prometheus: the process metric process_open_fds is not exposed: its name "process_open_fds" is also the name of gauge "process_open_fds" in the Prometheus exposition, where a scrape fails on a name two families claim; rename the metrics.yaml one to get it back',
      'warn: prometheus: the process metric nodejs_active_handles is not exposed: its name "nodejs_active_handles" is also the name of counter "nodejs_active_handles" in the Prometheus exposition, where a scrape fails on a name two families claim; rename the metrics.yaml one to get it back',
      'warn: prometheus: the process metric nodejs_active_handles_total is not exposed: its name "nodejs_active_handles_total" is also the OpenMetrics _total series of counter "nodejs_active_handles" in the Prometheus exposition, where a scrape fails on a name two families claim; rename the metrics.yaml one to get it back',
    ]);
  });

  it('should answer a one-line comment when prometheus is not among the modes', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-prom-off-'));
    try {
      const fm = new FrontendMetrics(makeConfig([], { modes: ['tslog'] }), {
        logDir: dir,
        modes: ['tslog', 'statsd'],
        log: () => {},
      });
      expect(await fm.prometheusText()).to.equal(
        '# the prometheus sink is off (metrics modes: tslog, statsd); enable it with --metrics-mode prometheus (comma list allowed) or add prometheus to mode: in metrics.yaml\n',
      );
      await fm.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
