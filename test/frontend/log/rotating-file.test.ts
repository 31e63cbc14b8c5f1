import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RotatingFile } from '../../../frontend/log/rotating-file.js';
import { captureLog } from '../metrics/make-config.js';
import { until } from '../../support/until.js';

describe('RotatingFile', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-rotating-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const base = {
    label: 'metrics log',
    flushMs: 60_000,
    chunkChars: 1 << 20,
    maxQueueChars: 1 << 22,
    log: (): void => {},
  };

  it('should rotate by size into .1 … .keep and drop the oldest', async () => {
    const file = path.join(dir, 'ts_metrics.log');
    const f = new RotatingFile(file, { ...base, maxBytes: 20, keep: 2 });
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
    const f = new RotatingFile(file, { ...base, maxBytes: 100, keep: 5 });
    const line = (i: number): string => `line-${String(i).padStart(2, '0')}\n`; // 8 bytes
    for (let i = 0; i < 10; i++) f.append(line(i));
    const first = f.flush(); // chunk 1: lines 0-9 (80 bytes)
    for (let i = 10; i < 30; i++) f.append(line(i)); // queued while chunk 1 is written
    await Promise.all([first, f.close()]); // chunk 2: lines 10-29; 80 + 160 > 100: rotate first
    const all = (from: number, to: number): string =>
      Array.from({ length: to - from }, (_v, k) => line(from + k)).join('');
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['ts_metrics.log', 'ts_metrics.log.1']);
    expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal(all(0, 10));
    expect(fs.readFileSync(file, 'utf8')).to.equal(all(10, 30));
  });

  it('should lose, interleave or reorder no line across many rotations while lines keep coming', async () => {
    const file = path.join(dir, 'm.log');
    const f = new RotatingFile(file, { ...base, flushMs: 1, chunkChars: 300, maxBytes: 1000, keep: 200 });
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
    const rotated = files
      .filter((n) => n !== 'm.log')
      .map((n) => Number(n.slice('m.log.'.length)))
      .sort((a, b) => b - a);
    // Chunks are at most ~330 bytes, so no file passes maxBytes: at least total/1000 files.
    const total = Buffer.byteLength(lines.join(''));
    expect(rotated.length + 1).to.be.at.least(Math.ceil(total / 1000));
    for (const k of rotated) expect(fs.statSync(`${file}.${k}`).size).to.be.at.most(1000);
    expect(rotated).to.deep.equal(Array.from({ length: rotated.length }, (_v, k) => rotated.length - k)); // .N … .1, no gap
    const text = [...rotated.map((k) => fs.readFileSync(`${file}.${k}`, 'utf8')), fs.readFileSync(file, 'utf8')].join(
      '',
    );
    expect(text).to.equal(lines.join(''));
  });

  it('should keep lines queued until flushed and append to an existing file; lines after close are ignored', async () => {
    const file = path.join(dir, 'model_metrics.log');
    fs.writeFileSync(file, 'old\n');
    const f = new RotatingFile(file, { ...base, maxBytes: 1000, keep: 1 });
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
    const f = new RotatingFile(file, { ...base, chunkChars: 4, maxBytes: 1000, keep: 1 });
    f.append('ab\n');
    await new Promise((r) => setImmediate(r));
    expect(fs.existsSync(file)).to.equal(false);
    f.append('cd\n');
    // No flush and no timer (flushMs is a minute): only the full chunk can have written it.
    await until(() => fs.existsSync(file) && fs.readFileSync(file, 'utf8') === 'ab\ncd\n', {
      message: 'the full chunk on disk',
      observe: () => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : null),
    });
    await f.close();
  });

  it('should write multi-byte lines and a line longer than a whole chunk byte for byte, in order, across chunk buffers reused from the pool', async () => {
    const file = path.join(dir, 'u.log');
    const f = new RotatingFile(file, { ...base, flushMs: 1, chunkChars: 16, maxBytes: 1 << 20, keep: 1 });
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
    const f = new RotatingFile(file, {
      ...base,
      maxQueueChars: 10,
      maxBytes: 1000,
      keep: 1,
      log: log.log,
      nowMs: () => now,
      onLost: (n) => lost.push(n),
      countedIn: 'tsserve_sink_errors_total{sink="tslog"}',
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
    const f = new RotatingFile(file, { ...base, maxBytes: 1000, keep: 1, log: log.log, onLost: (n) => lost.push(n) });
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
    const f = new RotatingFile(fifo, {
      ...base,
      maxBytes: 1000,
      keep: 1,
      closeTimeoutMs: 50,
      log: log.log,
      onLost: (n) => lost.push(n),
    });
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
    const f = new RotatingFile('/dev/full', { ...base, maxBytes: 1 << 30, keep: 0, onLost: (n) => lost.push(n) });
    f.append('a\n');
    f.append('b\n');
    await f.flush();
    f.append('c\n');
    await f.close();
    expect(lost).to.deep.equal([2, 1]);
  });
});

describe('RotatingFile rotation failures and flushSync', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-rotating-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const base = { label: 'access log', flushMs: 60_000, chunkChars: 1, maxQueueChars: 1 << 22, maxBytes: 20, keep: 1 };
  /** `.1` a directory with a file in it: removing it to make room fails, even for root. */
  const blockRotation = (file: string): void => {
    fs.mkdirSync(`${file}.1`);
    fs.writeFileSync(path.join(`${file}.1`, 'x'), 'x');
  };
  const eisdir = (file: string): string =>
    `SystemError [ERR_FS_EISDIR]: Path is a directory: rm returned EISDIR (is a directory) ${file}.1`;

  for (const sync of [false, true]) {
    it(`should count a failed rotation exactly once, warn with its error, write on in the current file and rotate again after rewarnMs (${sync ? 'sync' : 'queued'})`, async () => {
      const file = path.join(dir, 'access_log.log');
      blockRotation(file);
      const log = captureLog();
      let now = 1000;
      let failures = 0;
      const f = new RotatingFile(file, {
        ...base,
        sync,
        log: log.log,
        nowMs: () => now,
        onRotateFailed: () => failures++,
        rotationCountedIn: 'tsserve_log_errors_total{file="access_log.log",reason="rotation_failed"}',
      });
      for (const n of ['1', '2', '3']) {
        f.append(`line-${n}-0123456789\n`); // 18 bytes: the bound is passed at line 2
        await f.flush();
      }
      expect(failures).to.equal(1); // line 3 did not try again: within rewarnMs
      expect(fs.readFileSync(file, 'utf8')).to.equal('line-1-0123456789\nline-2-0123456789\nline-3-0123456789\n');
      expect(log.lines).to.deep.equal([
        `warn: access log ${file}: rotation failed: ${eisdir(file)}; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines); counted in tsserve_log_errors_total{file="access_log.log",reason="rotation_failed"}, and tried again at most once every 60 s`,
      ]);
      fs.rmSync(`${file}.1`, { recursive: true });
      now += 60_000;
      f.append('line-4-0123456789\n');
      await f.close();
      expect(failures).to.equal(1);
      expect(fs.readdirSync(dir).sort()).to.deep.equal(['access_log.log', 'access_log.log.1']);
      expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal(
        'line-1-0123456789\nline-2-0123456789\nline-3-0123456789\n',
      );
      expect(fs.readFileSync(file, 'utf8')).to.equal('line-4-0123456789\n');
    });
  }

  it('should warn about a second failed try with its number', async () => {
    const file = path.join(dir, 'a.log');
    blockRotation(file);
    const log = captureLog();
    let now = 0;
    const f = new RotatingFile(file, { ...base, sync: true, log: log.log, nowMs: () => now });
    f.append('line-1-0123456789\n');
    f.append('line-2-0123456789\n');
    now = 60_000;
    f.append('line-3-0123456789\n');
    await f.close();
    expect(log.lines).to.deep.equal([
      `warn: access log ${file}: rotation failed: ${eisdir(file)}; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines), and tried again at most once every 60 s`,
      `warn: access log ${file}: rotation failed: ${eisdir(file)}; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines) (failure 2)`,
    ]);
    expect(fs.readFileSync(file, 'utf8').split('\n').length - 1).to.equal(3);
  });

  it('should write each line at once in sync mode, rotating before the line that would pass maxBytes', async () => {
    const file = path.join(dir, 'ts_log.log');
    const f = new RotatingFile(file, { ...base, sync: true, maxBytes: 40, keep: 2, log: captureLog().log });
    for (let i = 1; i <= 7; i++) {
      f.append(`line-${i}-0123456789\n`); // 18 bytes: two lines a file
      expect(fs.readFileSync(file, 'utf8').endsWith(`line-${i}-0123456789\n`)).to.equal(true); // on disk at once
    }
    await f.close();
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['ts_log.log', 'ts_log.log.1', 'ts_log.log.2']);
    expect(fs.readFileSync(`${file}.2`, 'utf8')).to.equal('line-3-0123456789\nline-4-0123456789\n');
    expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal('line-5-0123456789\nline-6-0123456789\n');
    expect(fs.readFileSync(file, 'utf8')).to.equal('line-7-0123456789\n');
  });

  it('should throw from the constructor in sync mode when the file cannot be opened', () => {
    const file = path.join(dir, 'missing', 'ts_log.log');
    expect(() => new RotatingFile(file, { ...base, sync: true, log: captureLog().log })).to.throw(
      `ENOENT: no such file or directory, open '${file}'`,
    );
  });

  it('should write every queued line synchronously on flushSync, rotating as the queued writer would', async () => {
    const file = path.join(dir, 'access_log.log');
    const f = new RotatingFile(file, { ...base, maxBytes: 40, keep: 2, log: captureLog().log });
    // chunkChars 1: every line is a chunk of its own; the first waits on the open, the others queue.
    for (let i = 1; i <= 7; i++) f.append(`line-${i}-0123456789\n`);
    f.flushSync();
    expect(fs.readdirSync(dir).sort()).to.deep.equal(['access_log.log', 'access_log.log.1', 'access_log.log.2']);
    expect(fs.readFileSync(`${file}.2`, 'utf8')).to.equal('line-3-0123456789\nline-4-0123456789\n');
    expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal('line-5-0123456789\nline-6-0123456789\n');
    expect(fs.readFileSync(file, 'utf8')).to.equal('line-7-0123456789\n');
    // The writer whose open was under way is retired: the next line goes to the current file.
    f.append('line-8-0123456789\n');
    await f.close();
    expect(fs.readFileSync(file, 'utf8')).to.equal('line-7-0123456789\nline-8-0123456789\n');
    expect(fs.readFileSync(`${file}.1`, 'utf8')).to.equal('line-5-0123456789\nline-6-0123456789\n');
  });

  it('should count a chunk in flight into the size on flushSync, and leave it to land in the file it was written to', async () => {
    const file = path.join(dir, 'access_log.log');
    const f = new RotatingFile(file, { ...base, maxBytes: 40, keep: 3, log: captureLog().log });
    f.append('line-1-0123456789\n');
    await f.flush(); // the writer is open and idle
    for (let i = 2; i <= 7; i++) f.append(`line-${i}-0123456789\n`); // line 2 is handed to sonic-boom at once
    f.flushSync();
    f.append('line-8-0123456789\n');
    await f.close(); // line 2's write completes; its writer, now on a rotated file, is retired
    const read = (name: string): string => fs.readFileSync(path.join(dir, name), 'utf8');
    expect(fs.readdirSync(dir).sort()).to.deep.equal([
      'access_log.log',
      'access_log.log.1',
      'access_log.log.2',
      'access_log.log.3',
    ]);
    expect([
      read('access_log.log.3'),
      read('access_log.log.2'),
      read('access_log.log.1'),
      read('access_log.log'),
    ]).to.deep.equal([
      'line-1-0123456789\nline-2-0123456789\n',
      'line-3-0123456789\nline-4-0123456789\n',
      'line-5-0123456789\nline-6-0123456789\n',
      'line-7-0123456789\nline-8-0123456789\n',
    ]);
  });

  it('should write every queued line when the process exits without close()', () => {
    const file = path.join(dir, 'ts_metrics.log');
    const mod = path.resolve('dist/frontend/log/rotating-file.js');
    // Three lines on a one-minute timer, then exit: only the 'exit' flush can write them.
    const script = `
      const { RotatingFile } = await import(${JSON.stringify(mod)});
      const f = new RotatingFile(${JSON.stringify(file)}, { label: 'metrics log', maxBytes: 1 << 20, keep: 1, flushMs: 60000, chunkChars: 1 << 16, maxQueueChars: 1 << 20, log: () => {} });
      for (const l of ['a\\n', 'b\\n', 'c\\n']) f.append(l);
      process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script]);
    expect(fs.readFileSync(file, 'utf8')).to.equal('a\nb\nc\n');
  });
});
