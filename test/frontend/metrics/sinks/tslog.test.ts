import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FrontendMetrics } from '../../../../frontend/metrics/frontend-metrics.js';
import {
  decodeTslogField,
  encodeTslogField,
  formatTslogTimestamp,
  parseTslogLine,
} from '../../../../frontend/metrics/sinks/tslog-format.js';
import { FIXED_NOW_MS, captureLog, makeConfig, makeSpec } from '../make-config.js';

function readLines(file: string): string[] {
  return fs.readFileSync(file, 'utf8').split('\n').slice(0, -1);
}

/** Lines of ts_metrics.log without the self-metrics. */
function userLines(dir: string, file = 'ts_metrics.log'): string[] {
  return readLines(path.join(dir, file)).filter((l) => !/^\S+ - tsserve_/.test(l));
}

describe('tslog format', () => {
  it('should format the timestamp like log4j ISO8601 in UTC', () => {
    expect(formatTslogTimestamp(FIXED_NOW_MS)).to.equal('2023-07-17T17:00:25,016');
    expect(formatTslogTimestamp(FIXED_NOW_MS + 984)).to.equal('2023-07-17T17:00:26,000');
    expect(formatTslogTimestamp(FIXED_NOW_MS - 9.5)).to.equal('2023-07-17T17:00:25,006');
  });

  it('should percent-encode exactly the separators and decode them back', () => {
    const nasty = 'a|b,c:d%e\nf\rg 100%25 ü';
    const enc = encodeTslogField(nasty);
    expect(enc).to.equal('a%7Cb%2Cc%3Ad%25e%0Af%0Dg 100%2525 ü');
    expect(decodeTslogField(enc)).to.equal(nasty);
    expect(encodeTslogField('plain-value_1.2/x')).to.equal('plain-value_1.2/x');
    for (const s of [
      '',
      '%',
      '%%7C',
      '|#hostname:x,requestID:y',
      '%25',
      '\r\n',
      '%00%1B',
      String.fromCharCode(...Array.from({ length: 32 }, (_v, i) => i), 127),
    ]) {
      expect(decodeTslogField(encodeTslogField(s))).to.equal(s);
    }
  });

  it('should parse a TorchServe sample line into its fields', () => {
    const line =
      '2023-07-17T17:00:25,016 - ts_inference_requests_total.Count:1.0|#model_name:test_model,model_version:default|#hostname:torchserve-service-qa,timestamp:1689613225';
    expect(parseTslogLine(line)).to.deep.equal({
      time: '2023-07-17T17:00:25,016',
      name: 'ts_inference_requests_total',
      unit: 'Count',
      value: 1,
      valueText: '1.0',
      dimensions: [
        ['model_name', 'test_model'],
        ['model_version', 'default'],
      ],
      hostname: 'torchserve-service-qa',
      requestId: null,
      timestamp: 1689613225,
    });
  });

  it('should reject lines off the grammar', () => {
    const ok = '2023-07-17T17:00:25,016 - A.ms:1.0|#|#hostname:H,timestamp:1';
    expect(parseTslogLine(ok)).to.not.equal(null);
    expect(parseTslogLine(ok.replace('1.0', '1e21'))).to.equal(null);
    expect(parseTslogLine(ok.replace('1.0', '1'))).to.equal(null);
    expect(parseTslogLine(ok.replace('hostname:H', 'hostname:H,requestID:null,x'))).to.equal(null);
    expect(parseTslogLine(ok.replace('|#|#', '|#a:b:c|#'))).to.equal(null);
  });
});

describe('TslogSink', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tslog-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function make(
    metrics = [
      makeSpec('Requests2XX', 'counter', ['Level']),
      makeSpec('QueueTime', 'gauge', ['Level'], { unit: 'Milliseconds' }),
      makeSpec('HandlerTime', 'histogram', ['ModelName', 'Level'], { section: 'model_metrics', unit: 'ms' }),
      makeSpec('NoDims', 'gauge', [], { section: 'model_metrics', unit: 'B' }),
    ],
  ): FrontendMetrics {
    return new FrontendMetrics(makeConfig(metrics), {
      logDir: dir,
      hostname: 'host-1',
      nowMs: () => FIXED_NOW_MS,
      log: captureLog().log,
    });
  }

  it('should write counter, gauge and histogram lines in TorchServe grammar', async () => {
    const fm = make();
    fm.get('Requests2XX')!.addOrUpdate(1, ['Host']);
    fm.get('Requests2XX')!.addOrUpdate(3, { Level: 'Host' });
    fm.get('QueueTime')!.bind(['Host']).record(0.25, undefined, 1700000000999);
    const h = fm.get('HandlerTime')!.bind({ Level: 'Model', ModelName: 'mnist' });
    h.record(12.5, 'req-a');
    h.record(7);
    fm.get('NoDims')!.addOrUpdate(1024, undefined, 'r');
    await fm.close();
    expect(userLines(dir)).to.deep.equal([
      '2023-07-17T17:00:25,016 - Requests2XX.Count:1.0|#Level:Host|#hostname:host-1,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - Requests2XX.Count:3.0|#Level:Host|#hostname:host-1,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - QueueTime.Milliseconds:0.25|#Level:Host|#hostname:host-1,timestamp:1700000000',
    ]);
    expect(readLines(path.join(dir, 'model_metrics.log'))).to.deep.equal([
      '2023-07-17T17:00:25,016 - HandlerTime.ms:12.5|#ModelName:mnist,Level:Model|#hostname:host-1,requestID:req-a,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - HandlerTime.ms:7.0|#ModelName:mnist,Level:Model|#hostname:host-1,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - NoDims.B:1024.0|#|#hostname:host-1,requestID:r,timestamp:1689613225',
    ]);
  });

  it('should never print scientific notation', async () => {
    const fm = make();
    const g = fm.get('QueueTime')!.bind(['Host']);
    g.record(1e21);
    g.record(1e-7);
    g.record(-1.5e-9);
    await fm.close();
    expect(userLines(dir).map((l) => parseTslogLine(l)!.valueText)).to.deep.equal([
      '1000000000000000000000.0',
      '0.0000001',
      '-0.0000000015',
    ]);
  });

  it('should escape separators in values and request ids so lines round-trip', async () => {
    const fm = make();
    const nasty = 'a|b,c:d%e\nf';
    fm.get('HandlerTime')!.addOrUpdate(1, [nasty, 'x:y'], 'req|1,2:3');
    await fm.close();
    const lines = readLines(path.join(dir, 'model_metrics.log'));
    expect(lines).to.deep.equal([
      '2023-07-17T17:00:25,016 - HandlerTime.ms:1.0|#ModelName:a%7Cb%2Cc%3Ad%25e%0Af,Level:x%3Ay|#hostname:host-1,requestID:req%7C1%2C2%3A3,timestamp:1689613225',
    ]);
    const parsed = parseTslogLine(lines[0]!)!;
    expect(parsed.dimensions).to.deep.equal([
      ['ModelName', nasty],
      ['Level', 'x:y'],
    ]);
    expect(parsed.requestId).to.equal('req|1,2:3');
  });

  it('should percent-encode NUL, tab, ESC and the other control characters of a dimension value and request id (regression)', async () => {
    const fm = make();
    const nasty = 'a\u0000b\tc\u001bd\u007fe\u001f';
    fm.get('HandlerTime')!.addOrUpdate(1, [nasty, 'Model'], 'r\u0000\t\u001b[31m');
    await fm.close();
    const lines = readLines(path.join(dir, 'model_metrics.log'));
    // Written raw, the NUL made grep call the log a binary file and the ESC coloured the terminal tailing it.
    expect(lines).to.deep.equal([
      '2023-07-17T17:00:25,016 - HandlerTime.ms:1.0|#ModelName:a%00b%09c%1Bd%7Fe%1F,Level:Model|#hostname:host-1,requestID:r%00%09%1B[31m,timestamp:1689613225',
    ]);
    const parsed = parseTslogLine(lines[0]!)!;
    expect([parsed.dimensions[0], parsed.requestId]).to.deep.equal([['ModelName', nasty], 'r\u0000\t\u001b[31m']);
  });

  it('should put the hostname only in the hostname segment', async () => {
    const fm = make([makeSpec('Requests4XX', 'counter', ['Level'], { hostLabel: 'Hostname' })]);
    fm.get('Requests4XX')!.addOrUpdate(1, ['Host']);
    await fm.close();
    expect(userLines(dir)).to.deep.equal([
      '2023-07-17T17:00:25,016 - Requests4XX.Count:1.0|#Level:Host|#hostname:host-1,timestamp:1689613225',
    ]);
  });

  it('should write every line, self-metrics included, in the grammar', async () => {
    const fm = make();
    fm.get('Requests2XX')!.addOrUpdate(Number.NaN, ['Host']);
    fm.get('Requests2XX')!.addOrUpdate(1, ['a,b']);
    fm.self.flushed(2, 17);
    await fm.close();
    const lines = readLines(path.join(dir, 'ts_metrics.log'));
    expect(lines.length).to.equal(28);
    for (const l of lines) expect(parseTslogLine(l), l).to.not.equal(null);
    expect(lines.filter((l) => /- tsserve_(flush|datapoints)/.test(l))).to.deep.equal([
      '2023-07-17T17:00:25,016 - tsserve_datapoints_dropped_total.Count:1.0|#reason:not_finite|#hostname:host-1,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - tsserve_flush_batches_total.Count:2.0|#|#hostname:host-1,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - tsserve_flush_datapoints_total.Count:17.0|#|#hostname:host-1,timestamp:1689613225',
    ]);
  });
});

describe('TslogSink with an unwritable file', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tslog-bad-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Records the same datapoints into a fresh FrontendMetrics on `logDir` and flushes. */
  async function run(logDir: string): Promise<{ fm: FrontendMetrics; log: string[] }> {
    const log = captureLog();
    const fm = new FrontendMetrics(
      makeConfig([makeSpec('A', 'counter', ['Level']), makeSpec('M', 'gauge', [], { section: 'model_metrics' })], {
        modes: ['tslog', 'prometheus'],
      }),
      { logDir, hostname: 'h1', nowMs: () => FIXED_NOW_MS, log: log.log },
    );
    for (let i = 0; i < 5; i++) fm.get('A')!.addOrUpdate(1, ['Host']);
    fm.get('M')!.addOrUpdate(2);
    // Twice: counting the first losses creates a series, whose tsserve_series line is queued after.
    await fm.flush();
    await fm.flush();
    return { fm, log: log.lines };
  }

  it('should count every lost line in tsserve_sink_errors_total{sink="tslog"}, keep the other file and never log its own count', async () => {
    const control = path.join(dir, 'control');
    const ok = await run(control);
    await ok.fm.close();
    const written = readLines(path.join(control, 'ts_metrics.log')).length;
    expect(ok.log).to.deep.equal([]);
    expect(await ok.fm.prometheusText(['tsserve_sink_errors_total'])).to.not.contain('tsserve_sink_errors_total{');

    const bad = path.join(dir, 'bad');
    fs.mkdirSync(path.join(bad, 'ts_metrics.log'), { recursive: true });
    const { fm, log } = await run(bad);
    try {
      // Every line the control wrote, plus the two tsserve_series lines that binding the error
      // series makes (its own series count, and tsserve_series' count, which grows by that one).
      expect(written).to.equal(30);
      expect(await fm.prometheusText(['tsserve_sink_errors_total'])).to.contain(
        `tsserve_sink_errors_total{sink="tslog",Hostname="h1"} ${written + 2}\n`,
      );
      const file = path.join(bad, 'ts_metrics.log');
      expect(log).to.have.length(1);
      expect(log[0]).to.match(
        new RegExp(
          `^warn: metrics log ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: Error: EISDIR: illegal operation on a directory, open '[^']+'; \\d+ line\\(s\\) lost; every lost line is counted in tsserve_sink_errors_total\\{sink="tslog"\\}, and this warning repeats at most once every 60 s while lines are lost$`,
        ),
      );
      expect(readLines(path.join(bad, 'model_metrics.log'))).to.deep.equal([
        '2023-07-17T17:00:25,016 - M.Count:2.0|#|#hostname:h1,timestamp:1689613225',
      ]);
    } finally {
      await fm.close();
    }
  });

  it('should not write its own lost-line count to the file that still works', async () => {
    const bad = path.join(dir, 'bad-model');
    fs.mkdirSync(path.join(bad, 'model_metrics.log'), { recursive: true });
    const { fm } = await run(bad);
    await fm.close();
    expect(await fm.prometheusText(['tsserve_sink_errors_total'])).to.contain(
      'tsserve_sink_errors_total{sink="tslog",Hostname="h1"} 1\n',
    );
    const ts = readLines(path.join(bad, 'ts_metrics.log'));
    expect(ts.filter((l) => l.includes(' - A.'))).to.have.length(5);
    expect(ts.filter((l) => l.includes(' - tsserve_sink_errors_total.'))).to.deep.equal([]);
  });
});

describe('TslogSink rotation failure', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tslog-rot-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('should count a failed rotation once in tsserve_log_errors_total{file,reason="rotation_failed"}, warn once and write on', async () => {
    // ts_metrics.log.1 a directory with a file in it: making room for the rotation fails, even for root.
    const file = path.join(dir, 'ts_metrics.log');
    fs.mkdirSync(`${file}.1`);
    fs.writeFileSync(path.join(`${file}.1`, 'x'), 'x');
    const log = captureLog();
    const fm = new FrontendMetrics(
      makeConfig([makeSpec('A', 'counter', ['Level'])], { modes: ['tslog', 'prometheus'] }),
      {
        logDir: dir,
        hostname: 'h1',
        nowMs: () => FIXED_NOW_MS,
        log: log.log,
        logRotation: { maxBytes: 10, keep: 1 },
      },
    );
    const a = fm.get('A')!;
    a.addOrUpdate(1, ['Host']);
    await fm.flush(); // the first chunk goes to the empty file
    a.addOrUpdate(2, ['Host']);
    await fm.flush(); // the second would pass 10 bytes: the rotation fails, the chunk is written on
    a.addOrUpdate(3, ['Host']);
    await fm.flush(); // within a minute of the failure: not tried again
    await fm.close();
    expect(await fm.prometheusText(['tsserve_log_errors_total'])).to.equal(
      [
        '# HELP tsserve_log_errors_total Log file failures, by file (ts_log.log, access_log.log, ts_metrics.log, model_metrics.log) and reason (rotation_failed: a size rotation that failed, the file written on and the rotation tried again at most once a minute; lines_lost: lines of ts_log.log or access_log.log not written, a full buffer or a failed write; lost metric log lines are in tsserve_sink_errors_total) (unit: Count)',
        '# TYPE tsserve_log_errors_total counter',
        'tsserve_log_errors_total{file="ts_metrics.log",reason="rotation_failed",Hostname="h1"} 1',
        '',
      ].join('\n'),
    );
    expect(log.lines).to.deep.equal([
      `warn: metrics log ${file}: rotation failed: SystemError [ERR_FS_EISDIR]: Path is a directory: rm returned EISDIR (is a directory) ${file}.1; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines); counted in tsserve_log_errors_total{file="ts_metrics.log",reason="rotation_failed"}, and tried again at most once every 60 s`,
    ]);
    expect(userLines(dir).map((l) => /A\.Count:(\S+?)\|/.exec(l)?.[1])).to.deep.equal(['1.0', '2.0', '3.0']);
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['ts_metrics.log', 'ts_metrics.log.1']);
  });
});
