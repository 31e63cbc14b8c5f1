import { expect } from 'chai';
import dns from 'node:dns';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { MetricSpec, StatsdConfig } from '../../../../schema/types.js';
import { FrontendMetrics } from '../../../../frontend/metrics/frontend-metrics.js';
import { statsdWireType } from '../../../../frontend/metrics/sinks/statsd.js';
import { captureLog, makeConfig, makeSpec } from '../make-config.js';
import { freeUdpPort, mgmtCommand, startStatsd } from '../../../e2e/statsd-daemon.js';
import type { StatsdDaemon } from '../../../e2e/statsd-daemon.js';
import { until } from '../../../support/until.js';

describe('statsdWireType', () => {
  const hist = (unit: string): ReturnType<typeof makeSpec> => makeSpec('X', 'histogram', [], { unit });

  it('should send time histograms as ms timers scaled to milliseconds, whatever histogramType says', () => {
    for (const type of ['ms', 'h', 'd'] as const) {
      expect(['ms', 'Milliseconds', 'msec'].map((u) => statsdWireType(hist(u), type))).to.deep.equal(
        Array(3).fill({ code: 'ms', shift: 0 }),
      );
      expect(['s', 'Seconds', 'sec'].map((u) => statsdWireType(hist(u), type))).to.deep.equal(
        Array(3).fill({ code: 'ms', shift: 3 }),
      );
      expect(['us', 'Microseconds', 'µs'].map((u) => statsdWireType(hist(u), type))).to.deep.equal(
        Array(3).fill({ code: 'ms', shift: -3 }),
      );
    }
  });

  it('should never send a non-time histogram as a timer: h by default and for ms, d when configured', () => {
    const units = ['Tokens', 'Count', 'percent', 'MB', 'GB', 'B', 'Widgets'];
    expect(units.map((u) => statsdWireType(hist(u), 'ms').code)).to.deep.equal(Array(units.length).fill('h'));
    expect(units.map((u) => statsdWireType(hist(u), 'h').code)).to.deep.equal(Array(units.length).fill('h'));
    expect(units.map((u) => statsdWireType(hist(u), 'd').code)).to.deep.equal(Array(units.length).fill('d'));
  });

  it('should keep counters and gauges as c and g with their values unscaled, time units included', () => {
    expect(statsdWireType(makeSpec('C', 'counter', [], { unit: 'Microseconds' }), 'ms')).to.deep.equal({
      code: 'c',
      shift: 0,
    });
    expect(statsdWireType(makeSpec('G', 'gauge', [], { unit: 'Seconds' }), 'ms')).to.deep.equal({
      code: 'g',
      shift: 0,
    });
  });
});

describe('StatsdSink with the real statsd daemon', () => {
  let daemon: StatsdDaemon;
  /** What the daemon received since the current test began. */
  let received: string[] = [];
  let dir: string;
  let port: number;
  let mgmtPort: number;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-statsd-'));
    daemon = await startStatsd();
    port = daemon.port;
    received = daemon.lines;
    mgmtPort = daemon.mgmtPort;
  });

  after(() => {
    daemon.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    received.length = 0;
  });

  async function send(
    metrics: readonly MetricSpec[],
    statsd: Partial<StatsdConfig>,
    act: (fm: FrontendMetrics) => void,
    expected: number,
  ): Promise<string[]> {
    const config = makeConfig(metrics, { modes: ['statsd'], statsd: { prefix: 'ts.', ...statsd } });
    const fm = new FrontendMetrics(config, {
      logDir: dir,
      hostname: 'h1',
      statsd: { host: '127.0.0.1', port },
      log: () => {},
    });
    act(fm);
    await fm.close();
    const mine = (): string[] => received.filter((l) => l.startsWith('ts.') && !l.startsWith('ts.tsserve_'));
    await until(() => mine().length >= expected, { message: `${expected} lines at the statsd daemon`, observe: mine });
    return mine();
  }

  it('should resolve a host name once, not once per datagram (a DNS query for every send)', async () => {
    let lookups = 0;
    const original = dns.lookup;
    // Only a name costs a resolver query (getaddrinfo); an IP literal is answered in place.
    const counting = ((host: string, ...rest: unknown[]): unknown => {
      if (net.isIP(host) === 0) lookups++;
      return (original as (...a: unknown[]) => unknown).call(dns, host, ...rest);
    }) as typeof dns.lookup;
    dns.lookup = counting;
    try {
      const fm = new FrontendMetrics(
        makeConfig([makeSpec('Lat', 'histogram', [], { unit: 'Tokens' })], {
          modes: ['statsd'],
          statsd: { prefix: 'dns.' },
        }),
        { logDir: dir, hostname: 'h1', statsd: { host: 'localhost', port }, log: () => {} },
      );
      const mine = (): string[] => received.filter((l) => l.startsWith('dns.Lat:'));
      // Each observation waits for the previous one to arrive, so each is its own datagram.
      for (let i = 1; i <= 5; i++) {
        fm.get('Lat')!.addOrUpdate(i);
        await until(() => mine().length >= i, { message: `observation ${i} at the statsd daemon`, observe: mine });
      }
      await fm.close();
      expect([mine(), lookups]).to.deep.equal([
        ['dns.Lat:1|h', 'dns.Lat:2|h', 'dns.Lat:3|h', 'dns.Lat:4|h', 'dns.Lat:5|h'],
        1,
      ]);
    } finally {
      dns.lookup = original;
    }
  });

  it('should send counters, gauges and timings with DogStatsD tags and plain decimals', async () => {
    const lines = await send(
      [
        makeSpec('Requests2XX', 'counter', ['Level'], { hostLabel: 'Hostname' }),
        makeSpec('QueueTime', 'gauge', ['Level']),
        makeSpec('HandlerTime', 'histogram', ['ModelName', 'Level'], { section: 'model_metrics', unit: 'ms' }),
      ],
      { tagStyle: 'datadog' },
      (fm) => {
        fm.get('Requests2XX')!.addOrUpdate(1, ['Host']);
        fm.get('QueueTime')!.addOrUpdate(1e21, ['Host']);
        fm.get('QueueTime')!.addOrUpdate(-3, ['Worker']);
        fm.get('HandlerTime')!.addOrUpdate(1e-7, { ModelName: 'a|b,c:d@e#f', Level: 'Model' });
      },
      4,
    );
    // Histogram observations go out as recorded; counters and gauges at the interval's flush.
    expect(lines).to.deep.equal([
      'ts.HandlerTime:0.0000001|ms|#ModelName:a_b_c_d_e_f,Level:Model,Hostname:h1',
      'ts.Requests2XX:1|c|#Level:Host,Hostname:h1',
      'ts.QueueTime:1000000000000000000000|g|#Level:Host',
      'ts.QueueTime:-3|g|#Level:Worker',
    ]);
  });

  it('should aggregate counters (the sum) and gauges (the last level) per series over a flush interval, and send every histogram observation', async () => {
    const lines = await send(
      [
        makeSpec('Reqs', 'counter', ['m']),
        makeSpec('Depth', 'gauge', ['m']),
        makeSpec('Size', 'histogram', ['m'], { unit: 'Bytes' }),
      ],
      { tagStyle: 'datadog' },
      (fm) => {
        for (let i = 1; i <= 100; i++) {
          fm.get('Reqs')!.addOrUpdate(i, ['a']);
          fm.get('Reqs')!.addOrUpdate(1, ['b']);
          fm.get('Depth')!.addOrUpdate(i, ['a']);
        }
        fm.get('Size')!.addOrUpdate(7, ['a']);
        fm.get('Size')!.addOrUpdate(7, ['a']);
      },
      5,
    );
    expect(lines).to.deep.equal([
      'ts.Size:7|h|#m:a',
      'ts.Size:7|h|#m:a',
      'ts.Reqs:5050|c|#m:a',
      'ts.Reqs:100|c|#m:b',
      'ts.Depth:100|g|#m:a',
    ]);
    expect(await mgmtCommand(mgmtPort, 'counters')).to.contain("'ts.Reqs;m=a': 5050");
  });

  it('should put Telegraf tags after the name and zero a gauge before a negative level', async () => {
    const lines = await send(
      [
        makeSpec('Depth', 'gauge', ['q'], { hostLabel: 'host' }),
        makeSpec('Lat', 'histogram', ['m']),
        makeSpec('Hits', 'counter', []),
      ],
      { tagStyle: 'telegraf', histogramType: 'h' },
      (fm) => {
        fm.get('Depth')!.addOrUpdate(-2.5, ['a=b c']);
        fm.get('Lat')!.addOrUpdate(12.25, ['m1']);
        fm.get('Hits')!.addOrUpdate(3);
      },
      4,
    );
    expect(lines).to.deep.equal([
      'ts.Lat,m=m1:12.25|h',
      'ts.Depth,q=a_b_c,host=h1:0|g',
      'ts.Depth,q=a_b_c,host=h1:-2.5|g',
      'ts.Hits:3|c',
    ]);
  });

  it('should drop tags with tagStyle none and send distributions as d', async () => {
    const lines = await send(
      [makeSpec('Lat', 'histogram', ['m'], { hostLabel: 'Hostname' })],
      { tagStyle: 'none', histogramType: 'd', prefix: 'ts.' },
      (fm) => fm.get('Lat')!.addOrUpdate(2, ['m1']),
      1,
    );
    expect(lines).to.deep.equal(['ts.Lat:2|d']);
  });

  it('should map characters StatsD names cannot carry (a Prometheus-valid : included) to _ in the prefix and name', async () => {
    // The prefix is not 'ts.', so `send` returns nothing of these: read what the daemon got.
    await send(
      [makeSpec('job:requests:rate5m', 'counter', ['m']), makeSpec('ok_name', 'gauge', [])],
      { tagStyle: 'datadog', prefix: 'my app|x@y#z,w:' },
      (fm) => {
        fm.get('job:requests:rate5m')!.addOrUpdate(2, ['a:b']);
        fm.get('ok_name')!.addOrUpdate(1);
      },
      0,
    );
    const mine = (): string[] => received.filter((l) => /rate5m|ok_name/.test(l) && !l.includes('tsserve_'));
    await until(() => mine().length >= 2, { message: 'the two sanitized lines at the statsd daemon', observe: mine });
    expect(mine()).to.deep.equal(['my_app_x_y_z_w_job_requests_rate5m:2|c|#m:a_b', 'my_app_x_y_z_w_ok_name:1|g']);
    received.length = 0;
    const telegraf = await send(
      [makeSpec('job:requests:rate5m', 'histogram', ['m'])],
      { tagStyle: 'telegraf', prefix: 'ts.' },
      (fm) => fm.get('job:requests:rate5m')!.addOrUpdate(0.5, ['m1']),
      1,
    );
    expect(telegraf).to.deep.equal(['ts.job_requests_rate5m,m=m1:0.5|h']);
  });

  it('should send NUL, tab, ESC and the other control characters of a tag value as _ in either tag style (regression)', async () => {
    const nasty = 'a\u0000b\tc\u001bd\u007fe\u001f';
    const specs = [makeSpec('Lat', 'histogram', ['m'], { unit: 'Tokens' })];
    const datadog = await send(specs, { tagStyle: 'datadog' }, (fm) => fm.get('Lat')!.addOrUpdate(2, [nasty]), 1);
    received.length = 0;
    const telegraf = await send(specs, { tagStyle: 'telegraf' }, (fm) => fm.get('Lat')!.addOrUpdate(3, [nasty]), 1);
    // They went into the datagram as is (the telegraf style mapped the tab, as whitespace, only).
    expect([datadog, telegraf]).to.deep.equal([['ts.Lat:2|h|#m:a_b_c_d_e_'], ['ts.Lat,m=a_b_c_d_e_:3|h']]);
  });

  it('should warn once when two metrics are sent under one StatsD name (job:rate and job_rate)', async () => {
    // Regression: both went as ts.job_rate and the agent summed them, silently.
    const log = captureLog();
    const config = makeConfig(
      [makeSpec('job:rate', 'counter', []), makeSpec('job_rate', 'counter', []), makeSpec('job|rate', 'gauge', [])],
      { modes: ['statsd'], statsd: { prefix: 'ts.' } },
    );
    const fm = new FrontendMetrics(config, {
      logDir: dir,
      hostname: 'h1',
      statsd: { host: '127.0.0.1', port },
      log: log.log,
    });
    await fm.close();
    expect(log.lines).to.deep.equal([
      'warn: statsd: job_rate and job:rate are both sent as ts.job_rate (StatsD names cannot carry : | @ # , or spaces), so the agent mixes their datapoints; rename one',
      'warn: statsd: job|rate and job:rate are both sent as ts.job_rate (StatsD names cannot carry : | @ # , or spaces), so the agent mixes their datapoints; rename one',
    ]);
  });

  it('should send a seconds or microseconds observation as the decimal recorded, its point moved (0.0041 s is 4.1|ms)', async () => {
    // Regression: 0.0041 * 1000 went out as 4.1000000000000005|ms, 1.005 s as 1004.9999999999999|ms.
    const lines = await send(
      [
        makeSpec('shift_seconds', 'histogram', [], { unit: 'Seconds' }),
        makeSpec('shift_us', 'histogram', [], { unit: 'us' }),
      ],
      { tagStyle: 'none' },
      (fm) => {
        for (const v of [0.0041, 1.005, 0.000123, 2e-7, 12]) fm.get('shift_seconds')!.addOrUpdate(v);
        for (const v of [7, 1000, 0.5, 1e21]) fm.get('shift_us')!.addOrUpdate(v);
      },
      9,
    );
    expect(lines).to.deep.equal([
      'ts.shift_seconds:4.1|ms',
      'ts.shift_seconds:1005|ms',
      'ts.shift_seconds:0.123|ms',
      'ts.shift_seconds:0.0002|ms',
      'ts.shift_seconds:12000|ms',
      'ts.shift_us:0.007|ms',
      'ts.shift_us:1|ms',
      'ts.shift_us:0.0005|ms',
      'ts.shift_us:1000000000000000000|ms',
    ]);
  });

  it('should send one exact wire string per unit kind: time histograms as ms timers in milliseconds, others as h', async () => {
    const lines = await send(
      [
        makeSpec('wire_ttft_seconds', 'histogram', [], { unit: 's' }),
        makeSpec('wire_latency_us', 'histogram', [], { unit: 'Microseconds' }),
        makeSpec('wire_handler_ms', 'histogram', [], { unit: 'ms' }),
        makeSpec('wire_tokens', 'histogram', ['model_name'], { unit: 'Tokens' }),
        makeSpec('wire_requests', 'counter', [], { unit: 'Count' }),
        makeSpec('wire_queue_seconds', 'gauge', [], { unit: 'Seconds' }),
      ],
      { tagStyle: 'datadog' }, // histogramType 'ms' (makeConfig's): non-time histograms still go as h
      (fm) => {
        fm.get('wire_ttft_seconds')!.addOrUpdate(0.06);
        fm.get('wire_latency_us')!.addOrUpdate(1234);
        fm.get('wire_handler_ms')!.addOrUpdate(12.5);
        fm.get('wire_tokens')!.addOrUpdate(17, ['m']);
        fm.get('wire_requests')!.addOrUpdate(2);
        fm.get('wire_queue_seconds')!.addOrUpdate(0.06);
      },
      6,
    );
    expect(lines).to.deep.equal([
      'ts.wire_ttft_seconds:60|ms',
      'ts.wire_latency_us:1.234|ms',
      'ts.wire_handler_ms:12.5|ms',
      'ts.wire_tokens:17|h|#model_name:m',
      'ts.wire_requests:2|c',
      'ts.wire_queue_seconds:0.06|g',
    ]);
    // What plain StatsD makes of them: timers in ms; `h` (and `d`) summed as counters.
    expect(await mgmtCommand(mgmtPort, 'timers')).to.contain("'ts.wire_ttft_seconds': [ 60 ]");
    expect(await mgmtCommand(mgmtPort, 'timers')).to.contain("'ts.wire_latency_us': [ 1.234 ]");
    expect(await mgmtCommand(mgmtPort, 'counters')).to.contain("'ts.wire_tokens;model_name=m': 17");
  });

  it('should send non-time histograms as d when histogramType is d, time histograms still as ms', async () => {
    const lines = await send(
      [
        makeSpec('wire_tokens_d', 'histogram', [], { unit: 'Tokens' }),
        makeSpec('wire_e2e_seconds', 'histogram', [], { unit: 'Seconds' }),
      ],
      { tagStyle: 'none', histogramType: 'd' },
      (fm) => {
        fm.get('wire_tokens_d')!.addOrUpdate(3);
        fm.get('wire_e2e_seconds')!.addOrUpdate(1.5);
      },
      2,
    );
    expect(lines).to.deep.equal(['ts.wire_tokens_d:3|d', 'ts.wire_e2e_seconds:1500|ms']);
  });

  it('should send self-metrics like any other metric', async () => {
    const config = makeConfig([], { modes: ['statsd'], statsd: { prefix: 'ts.' } });
    const fm = new FrontendMetrics(config, {
      logDir: dir,
      hostname: 'h1',
      statsd: { host: '127.0.0.1', port },
      log: () => {},
    });
    fm.self.flushed(2, 40);
    fm.self.dropped('malformed_message', 3);
    await fm.close();
    const want = [
      'ts.tsserve_flush_batches_total:2|c|#Hostname:h1',
      'ts.tsserve_flush_datapoints_total:40|c|#Hostname:h1',
      'ts.tsserve_datapoints_dropped_total:3|c|#reason:malformed_message,Hostname:h1',
    ];
    await until(() => want.every((w) => received.includes(w)), {
      message: 'the self-metric lines at the statsd daemon',
      observe: () => received,
    });
    expect(received.filter((l) => l.startsWith('ts.') && !l.startsWith('ts.tsserve_series:'))).to.deep.equal(want);
  });

  it('should count every failed send in tsserve_sink_errors_total{sink="statsd"} (never sent to StatsD) and warn again after 60 s of failures', async () => {
    let now = 0;
    const log = captureLog();
    const fm = new FrontendMetrics(
      makeConfig([makeSpec('Big', 'counter', ['v']), makeSpec('Small', 'counter', [])], {
        modes: ['statsd', 'prometheus'],
        statsd: { prefix: 'ts.' },
      }),
      {
        logDir: dir,
        hostname: 'h1',
        statsd: { host: '127.0.0.1', port },
        log: log.log,
        nowMs: () => now,
        statsdFlushMs: 10,
      },
    );
    // One line over the 8192 bytes an agent reads in one datagram: never sent, counted at once.
    const huge = 'x'.repeat(70_000);
    const errors = async (): Promise<number | null> => {
      const line = (await fm.prometheusText(['tsserve_sink_errors_total']))
        .split('\n')
        .find((l) => l.startsWith('tsserve_sink_errors_total{'));
      return line === undefined ? null : Number(line.split(' ')[1]);
    };
    const failUntil = async (n: number): Promise<void> => {
      fm.get('Big')!.addOrUpdate(1, [huge]);
      let seen: number | null = null;
      await until(async () => (seen = await errors()) === n, {
        message: `tsserve_sink_errors_total at ${n}`,
        observe: () => seen,
      });
    };
    const tooLong = `a line of 70014 bytes (ts.Big:1|c|#v:${'x'.repeat(46)}…) was not sent: it is longer than the 8192 bytes a StatsD agent reads in one datagram (DogStatsD's dogstatsd_buffer_size)`;
    const first = `warn: statsd 127.0.0.1:${port}: ${tooLong}; every failed send is counted in tsserve_sink_errors_total{sink="statsd"}, and this warning repeats at most once every 60 s while sends fail`;
    try {
      expect(await errors()).to.equal(null); // no series until a sink fails
      await failUntil(1);
      expect(log.lines).to.deep.equal([first]);
      now = 30_000;
      await failUntil(2);
      expect(log.lines).to.deep.equal([first]);
      fm.get('Small')!.addOrUpdate(1); // the sink keeps delivering what fits
      await until(() => received.includes('ts.Small:1|c'), {
        message: 'ts.Small:1|c at the statsd daemon',
        observe: () => received,
      });
      now = 61_000;
      await failUntil(3);
      expect(log.lines).to.deep.equal([
        first,
        `warn: statsd 127.0.0.1:${port}: 2 sends failed since the last warning, latest: ${tooLong}`,
      ]);
      expect(await fm.prometheusText(['tsserve_sink_errors_total'])).to.equal(
        [
          '# HELP tsserve_sink_errors_total Deliveries a sink failed to make (statsd: datagram sends; the datapoints a failed datagram carried are lost; tslog: metric lines lost) (unit: Count)',
          '# TYPE tsserve_sink_errors_total counter',
          'tsserve_sink_errors_total{sink="statsd",Hostname="h1"} 3',
          '',
        ].join('\n'),
      );
    } finally {
      await fm.close();
    }
    expect(received.filter((l) => l.startsWith('ts.tsserve_sink_errors_total'))).to.deep.equal([]);
  });

  it('should count and warn once about the datagrams an agent that is not listening refuses, never throw, and resolve every close', async () => {
    const dead = await freeUdpPort();
    const log = captureLog();
    const fm = new FrontendMetrics(makeConfig([makeSpec('X', 'counter', [])], { modes: ['statsd', 'prometheus'] }), {
      logDir: dir,
      hostname: 'h1',
      statsd: { host: '127.0.0.1', port: dead },
      log: log.log,
      statsdFlushMs: 10,
    });
    const errors = async (): Promise<number> =>
      Number(
        (await fm.prometheusText(['tsserve_sink_errors_total']))
          .split('\n')
          .find((l) => l.startsWith('tsserve_sink_errors_total{'))
          ?.split(' ')[1] ?? 0,
      );
    // Each datagram (these lines, and the self-metrics the sink sends too) is refused with an
    // ICMP port unreachable, which the connected socket hears (statsd-udp.test.ts counts them one by one).
    for (let i = 0; i < 1000; i++) fm.get('X')!.addOrUpdate(i);
    await until(() => log.lines.length === 1, { message: 'the refusal warning', observe: () => log.lines });
    expect(log.lines).to.deep.equal([
      `warn: statsd 127.0.0.1:${dead}: nothing listens there: a datagram was refused (ICMP port unreachable, recvmsg ECONNREFUSED); every failed send is counted in tsserve_sink_errors_total{sink="statsd"}, and this warning repeats at most once every 60 s while sends fail`,
    ]);
    await fm.close();
    const closed = await errors();
    // Records after close are never thrown: the closed socket's sends fail, counted, without a second warning within 60 s.
    for (let i = 0; i < 3000; i++) fm.get('X')!.addOrUpdate(i);
    await fm.close();
    expect(log.lines.length).to.equal(1);
    // The 3000 lines (28,889 bytes with their newlines) filled 3 datagrams of up to 8 KiB (an
    // agent on this host); the rest waits for the flush timer. Every record still counts in the
    // other sinks (0+…+999 + 0+…+2999).
    expect((await errors()) - closed).to.equal(3);
    expect(await fm.prometheusText(['X'])).to.equal(
      ['# HELP X X (unit: Count)', '# TYPE X counter', 'X 4998000', ''].join('\n'),
    );
  });

  it('should count the datagrams to a host name that does not resolve, and warn once', async () => {
    const log = captureLog();
    const fm = new FrontendMetrics(makeConfig([makeSpec('X', 'counter', [])], { modes: ['statsd', 'prometheus'] }), {
      logDir: dir,
      hostname: 'h1',
      statsd: { host: 'no-such-statsd-agent.invalid', port: 8125 },
      log: log.log,
      statsdFlushMs: 10,
    });
    fm.get('X')!.addOrUpdate(1);
    await until(() => log.lines.length === 1, { message: 'the lookup warning', observe: () => log.lines });
    const text = await fm.prometheusText(['tsserve_sink_errors_total']);
    await fm.close();
    expect(log.lines.map((l) => l.replace(/getaddrinfo \w+ /, 'getaddrinfo CODE '))).to.deep.equal([
      'warn: statsd no-such-statsd-agent.invalid:8125: Error sending hot-shots message: Error: getaddrinfo CODE no-such-statsd-agent.invalid; every failed send is counted in tsserve_sink_errors_total{sink="statsd"}, and this warning repeats at most once every 60 s while sends fail',
    ]);
    expect(
      text.split('\n').some((l) => l.startsWith('tsserve_sink_errors_total{sink="statsd",Hostname="h1"} ')),
    ).to.equal(true);
  });
});
