import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
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
import { TslogFile } from '../../../../frontend/metrics/sinks/tslog-file.js';
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
    for (const s of ['', '%', '%%7C', '|#hostname:x,requestID:y', '%25', '\r\n']) {
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
      makeConfig([makeSpec('A', 'counter', ['Level']), makeSpec('M', 'gauge', [], { section: 'model_metrics' })], { modes: ['tslog', 'prometheus'] }),
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
      expect(await fm.prometheusText(['tsserve_sink_errors_total'])).to.contain(`tsserve_sink_errors_total{sink="tslog",Hostname="h1"} ${written + 2}\n`);
      const file = path.join(bad, 'ts_metrics.log');
      expect(log).to.have.length(1);
      expect(log[0]).to.match(new RegExp(`^warn: metrics log ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: Error: EISDIR: illegal operation on a directory, open '[^']+'; \\d+ line\\(s\\) lost; every lost line is counted in tsserve_sink_errors_total\\{sink="tslog"\\}, and this warning repeats at most once every 60 s while lines are lost$`));
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
    expect(await fm.prometheusText(['tsserve_sink_errors_total'])).to.contain('tsserve_sink_errors_total{sink="tslog",Hostname="h1"} 1\n');
    const ts = readLines(path.join(bad, 'ts_metrics.log'));
    expect(ts.filter((l) => l.includes(' - A.'))).to.have.length(5);
    expect(ts.filter((l) => l.includes(' - tsserve_sink_errors_total.'))).to.deep.equal([]);
  });
});

describe('TslogFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tslogfile-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const base = { flushMs: 60_000, chunkChars: 1 << 20, maxQueueChars: 1 << 22, log: (): void => {} };

  it('should rotate by size into .1 … .keep and drop the oldest', async () => {
    const file = path.join(dir, 'ts_metrics.log');
    const f = new TslogFile(file, { ...base, maxBytes: 20, keep: 2 });
    for (const n of ['1', '2', '3', '4']) {
      f.append(`line-${n}-0123456789\n`); // 18 bytes: one line per file
      await f.flush();
    }
    await f.close();
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['ts_metrics.log', 'ts_metrics.log.1', 'ts_metrics.log.2']);
    expect(fs.readFileSync(file, 'utf8')).to.equal('line-4-0123456789\n');
    expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal('line-3-0123456789\n');
    expect(fs.readFileSync(`${file}.2`, 'utf8')).to.equal('line-2-0123456789\n');
  });

  it('should rotate between chunks, before the one that would pass maxBytes, whole chunks per file', async () => {
    const file = path.join(dir, 'ts_metrics.log');
    const f = new TslogFile(file, { ...base, maxBytes: 100, keep: 5 });
    const line = (i: number): string => `line-${String(i).padStart(2, '0')}\n`; // 8 bytes
    for (let i = 0; i < 10; i++) f.append(line(i));
    const first = f.flush(); // chunk 1: lines 0-9 (80 bytes)
    for (let i = 10; i < 30; i++) f.append(line(i)); // queued while chunk 1 is written
    await Promise.all([first, f.close()]); // chunk 2: lines 10-29; 80 + 160 > 100: rotate first
    const all = (from: number, to: number): string => Array.from({ length: to - from }, (_v, k) => line(from + k)).join('');
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['ts_metrics.log', 'ts_metrics.log.1']);
    expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal(all(0, 10));
    expect(fs.readFileSync(file, 'utf8')).to.equal(all(10, 30));
  });

  it('should lose, interleave or reorder no line across many rotations while lines keep coming', async () => {
    const file = path.join(dir, 'm.log');
    const f = new TslogFile(file, { ...base, flushMs: 1, chunkChars: 300, maxBytes: 1000, keep: 200 });
    const lines: string[] = [];
    // Batch b+1 is appended while batch b is written or rotated (only batch b-1 is awaited).
    let previous = Promise.resolve();
    for (let batch = 0; batch < 40; batch++) {
      for (let i = 0; i < 50; i++) {
        const l = `batch-${batch}-line-${i}-${'x'.repeat(i % 7)}\n`;
        lines.push(l);
        f.append(l);
      }
      const flushed = f.flush();
      await previous;
      previous = flushed;
    }
    await f.close();
    const files = fs.readdirSync(dir);
    const rotated = files.filter((n) => n !== 'm.log').map((n) => Number(n.slice('m.log.'.length))).sort((a, b) => b - a);
    // Chunks are at most ~330 bytes, so no file passes maxBytes: at least total/1000 files.
    const total = Buffer.byteLength(lines.join(''));
    expect(rotated.length + 1).to.be.at.least(Math.ceil(total / 1000));
    for (const k of rotated) expect(fs.statSync(`${file}.${k}`).size).to.be.at.most(1000);
    expect(rotated).to.deep.equal(Array.from({ length: rotated.length }, (_v, k) => rotated.length - k)); // .N … .1, no gap
    const text = [...rotated.map((k) => fs.readFileSync(`${file}.${k}`, 'utf8')), fs.readFileSync(file, 'utf8')].join('');
    expect(text).to.equal(lines.join(''));
  });

  it('should keep lines queued until flushed and append to an existing file; lines after close are ignored', async () => {
    const file = path.join(dir, 'model_metrics.log');
    fs.writeFileSync(file, 'old\n');
    const f = new TslogFile(file, { ...base, maxBytes: 1000, keep: 1 });
    f.append('a\n');
    f.append('b\n');
    await new Promise((r) => setImmediate(r));
    expect(fs.readFileSync(file, 'utf8')).to.equal('old\n');
    await f.close();
    expect(fs.readFileSync(file, 'utf8')).to.equal('old\na\nb\n');
    f.append('after-close\n');
    await f.flush();
    expect(fs.readFileSync(file, 'utf8')).to.equal('old\na\nb\n');
  });

  it('should write on its own, without the timer, once chunkChars are queued', async () => {
    const file = path.join(dir, 'x.log');
    const f = new TslogFile(file, { ...base, chunkChars: 4, maxBytes: 1000, keep: 1 });
    f.append('ab\n');
    await new Promise((r) => setImmediate(r));
    expect(fs.existsSync(file)).to.equal(false);
    f.append('cd\n');
    while (!(fs.existsSync(file) && fs.readFileSync(file, 'utf8') === 'ab\ncd\n')) await new Promise((r) => setTimeout(r, 5));
    await f.close();
  });

  it('should write multi-byte lines and a line longer than a whole chunk byte for byte, in order, across chunk buffers reused from the pool', async () => {
    const file = path.join(dir, 'u.log');
    const f = new TslogFile(file, { ...base, flushMs: 1, chunkChars: 16, maxBytes: 1 << 20, keep: 1 });
    const lines: string[] = [];
    for (let round = 0; round < 20; round++) {
      for (const l of [`é€😀-${round}\n`, `ascii-${round}\n`, `${'long-'.repeat(10)}${round}\n`]) {
        lines.push(l);
        f.append(l);
      }
      await f.flush();
    }
    await f.close();
    expect(fs.readFileSync(file, 'utf8')).to.equal(lines.join(''));
  });

  it('should drop and count exactly the lines that would pass maxQueueChars, and warn at most once a minute', async () => {
    const file = path.join(dir, 'q.log');
    const log = captureLog();
    let now = 0;
    const lost: number[] = [];
    const f = new TslogFile(file, {
      ...base, maxQueueChars: 10, maxBytes: 1000, keep: 1, log: log.log, nowMs: () => now,
      onLost: (n) => lost.push(n), countedIn: 'tsserve_sink_errors_total{sink="tslog"}',
    });
    f.append('abcd\n');
    f.append('efgh\n'); // 10 characters queued: the cap
    f.append('x\n'); // dropped
    now = 59_999;
    f.append('y\n'); // dropped, not warned
    now = 60_000;
    f.append('z\n'); // dropped, warned with the count since the last warning
    expect(lost).to.deep.equal([1, 1, 1]);
    expect(log.lines).to.deep.equal([
      `warn: metrics log ${file}: queue full (10 characters); 1 line(s) lost; every lost line is counted in tsserve_sink_errors_total{sink="tslog"}, and this warning repeats at most once every 60 s while lines are lost`,
      `warn: metrics log ${file}: 2 lines lost since the last warning, latest: queue full (10 characters)`,
    ]);
    await f.flush();
    f.append('ijkl\n'); // room again once the queue is written
    await f.close();
    expect(lost).to.deep.equal([1, 1, 1]);
    expect(fs.readFileSync(file, 'utf8')).to.equal('abcd\nefgh\nijkl\n');
  });

  it('should count the lines of every failed open, keep serving records, and write again once the file is writable', async () => {
    const file = path.join(dir, 'ts_metrics.log');
    fs.mkdirSync(file); // EISDIR on open
    const log = captureLog();
    const lost: number[] = [];
    const f = new TslogFile(file, { ...base, maxBytes: 1000, keep: 1, log: log.log, onLost: (n) => lost.push(n) });
    f.append('a\n');
    f.append('b\n');
    f.append('c\n');
    await f.flush();
    expect(lost).to.deep.equal([3]);
    f.append('d\n');
    await f.flush();
    expect(lost).to.deep.equal([3, 1]);
    expect(log.lines).to.deep.equal([
      `warn: metrics log ${file}: Error: EISDIR: illegal operation on a directory, open '${file}'; 3 line(s) lost; every lost line is counted in the sink errors, and this warning repeats at most once every 60 s while lines are lost`,
    ]);
    fs.rmdirSync(file);
    f.append('e\n');
    await f.close();
    expect(lost).to.deep.equal([3, 1]);
    expect(fs.readFileSync(file, 'utf8')).to.equal('e\n');
  });

  it('should resolve close() at its bound when the open never completes, counting the unwritten lines', async () => {
    const fifo = path.join(dir, 'fifo.log');
    execFileSync('mkfifo', [fifo]); // opening a FIFO for writing blocks until a reader comes
    const lost: number[] = [];
    const log = captureLog();
    const f = new TslogFile(fifo, { ...base, maxBytes: 1000, keep: 1, closeTimeoutMs: 50, log: log.log, onLost: (n) => lost.push(n) });
    f.append('a\n');
    const never = f.flush(); // its chunk waits on the open
    f.append('b\n');
    f.append('c\n');
    await f.close();
    await never; // resolved by close, not left hanging
    expect(lost).to.deep.equal([3]);
    expect(log.lines).to.deep.equal([
      `warn: metrics log ${fifo}: not written within the close timeout (50 ms); 3 line(s) lost; every lost line is counted in the sink errors, and this warning repeats at most once every 60 s while lines are lost`,
    ]);
    // Release the thread blocked in open(): a reader arrives, the abandoned writer just closes.
    const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    fs.closeSync(reader);
  });

  it('should count the lines of a failed write (ENOSPC on /dev/full)', async function () {
    if (!fs.existsSync('/dev/full')) throw new Error('/dev/full is missing on this machine');
    const lost: number[] = [];
    const f = new TslogFile('/dev/full', { ...base, maxBytes: 1 << 30, keep: 0, onLost: (n) => lost.push(n) });
    f.append('a\n');
    f.append('b\n');
    await f.flush();
    f.append('c\n');
    await f.close();
    expect(lost).to.deep.equal([2, 1]);
  });
});
