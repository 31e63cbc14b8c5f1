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
    expect(lines.length).to.equal(26);
    for (const l of lines) expect(parseTslogLine(l), l).to.not.equal(null);
    expect(lines.filter((l) => /- tsserve_(flush|datapoints)/.test(l))).to.deep.equal([
      '2023-07-17T17:00:25,016 - tsserve_datapoints_dropped_total.Count:1.0|#reason:not_finite|#hostname:host-1,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - tsserve_flush_batches_total.Count:2.0|#|#hostname:host-1,timestamp:1689613225',
      '2023-07-17T17:00:25,016 - tsserve_flush_datapoints_total.Count:17.0|#|#hostname:host-1,timestamp:1689613225',
    ]);
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

  it('should rotate by size into .1 … .keep and drop the oldest', () => {
    const file = path.join(dir, 'ts_metrics.log');
    const f = new TslogFile(file, { maxBytes: 20, keep: 2, flushMs: 1000, maxBufferChars: 1 << 20, log: () => {} });
    for (const n of ['1', '2', '3', '4']) {
      f.append(`line-${n}-0123456789\n`); // 18 bytes: one line per file
      f.flush();
    }
    f.close();
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['ts_metrics.log', 'ts_metrics.log.1', 'ts_metrics.log.2']);
    expect(fs.readFileSync(file, 'utf8')).to.equal('line-4-0123456789\n');
    expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal('line-3-0123456789\n');
    expect(fs.readFileSync(`${file}.2`, 'utf8')).to.equal('line-2-0123456789\n');
  });

  it('should keep buffering in memory until flushed and append to an existing file', () => {
    const file = path.join(dir, 'model_metrics.log');
    fs.writeFileSync(file, 'old\n');
    const f = new TslogFile(file, { maxBytes: 1000, keep: 1, flushMs: 60000, maxBufferChars: 1 << 20, log: () => {} });
    f.append('a\n');
    f.append('b\n');
    expect(fs.readFileSync(file, 'utf8')).to.equal('old\n');
    f.close();
    expect(fs.readFileSync(file, 'utf8')).to.equal('old\na\nb\n');
    f.append('after-close\n');
    f.flush();
    expect(fs.readFileSync(file, 'utf8')).to.equal('old\na\nb\n');
  });

  it('should flush on its own when the buffer passes its bound', () => {
    const file = path.join(dir, 'x.log');
    const f = new TslogFile(file, { maxBytes: 1000, keep: 1, flushMs: 60000, maxBufferChars: 4, log: () => {} });
    f.append('ab\n');
    expect(fs.existsSync(file)).to.equal(false);
    f.append('cd\n');
    expect(fs.readFileSync(file, 'utf8')).to.equal('ab\ncd\n');
    f.close();
  });
});
