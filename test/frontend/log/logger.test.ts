import { expect } from 'chai';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ACCESS_LOG_FILE, TS_LOG_FILE, createServerLogger } from '../../../frontend/log/logger.js';
import { until } from '../../support/until.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const HEAD = `"time":"2026-01-02T03:04:05.678Z","pid":${process.pid},"hostname":${JSON.stringify(os.hostname())}`;

describe('createServerLogger', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-log-'));
  });
  // A closed logger's writer may still finish a write it had begun (sonic-boom's, completed on
  // the event loop) while the directory is removed: removal is tried again, the loop running in
  // between, until nothing is left (a synchronous retry blocked the very callback it waited for).
  afterEach(() =>
    until(
      () => {
        try {
          fs.rmSync(dir, { recursive: true, force: true });
          return true;
        } catch {
          return null;
        }
      },
      { message: `${dir} removed` },
    ),
  );

  const lines = (file: string): string[] =>
    fs
      .readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .filter((l) => l !== '');

  it('should write exact JSON records to ts_log.log, with fields and child bindings', () => {
    const logger = createServerLogger({ level: 'info', logDir: dir, console: 'off', nowMs: () => T0 });
    logger.log.info('Model server started.');
    logger.log.warn('queue full', { model: 'mlp', depth: 3 });
    logger.log.child({ worker: 'W-9000-mlp_1.0', model: 'mlp' }).error('batch 1 failed');
    logger.close();
    expect(lines(TS_LOG_FILE)).to.deep.equal([
      `{"level":"info",${HEAD},"msg":"Model server started."}`,
      `{"level":"warn",${HEAD},"model":"mlp","depth":3,"msg":"queue full"}`,
      `{"level":"error",${HEAD},"worker":"W-9000-mlp_1.0","model":"mlp","msg":"batch 1 failed"}`,
    ]);
  });

  it('should drop records below --log-level warn', () => {
    const logger = createServerLogger({ level: 'warn', logDir: dir, console: 'off', nowMs: () => T0 });
    logger.log.info('not written');
    logger.log.debug('not written either');
    logger.log.warn('written');
    expect(logger.log.isLevelEnabled('info')).to.equal(false);
    expect(logger.log.isLevelEnabled('warn')).to.equal(true);
    logger.close();
    expect(lines(TS_LOG_FILE)).to.deep.equal([`{"level":"warn",${HEAD},"msg":"written"}`]);
  });

  it('should write nothing at all at silent', () => {
    const logger = createServerLogger({ level: 'silent', logDir: dir, console: 'off', nowMs: () => T0 });
    logger.log.fatal('nothing');
    logger.close();
    expect(fs.readFileSync(path.join(dir, TS_LOG_FILE), 'utf8')).to.equal('');
  });

  it('should write one exact access record per call to access_log.log, flushed by close()', () => {
    const logger = createServerLogger({ level: 'info', logDir: dir, console: 'off', nowMs: () => T0 });
    logger.access({
      listener: 'inference',
      port: 8080,
      method: 'POST',
      path: '/predictions/mlp',
      status: 200,
      durationMs: 1.25,
      bytes: 42,
      requestId: 'r-1',
    });
    logger.close();
    expect(lines(ACCESS_LOG_FILE)).to.deep.equal([
      '{"time":"2026-01-02T03:04:05.678Z","listener":"inference","port":8080,"method":"POST","path":"/predictions/mlp","status":200,"durationMs":1.25,"bytes":42,"requestId":"r-1"}',
    ]);
    expect(logger.accessDropped()).to.equal(0);
  });

  const record = (i: number) => ({
    listener: 'inference',
    port: 8080,
    method: 'POST',
    path: '/predictions/mlp',
    status: 200,
    durationMs: 1.25,
    bytes: 42,
    requestId: `r-${String(i).padStart(2, '0')}`,
  }); // every line the same length
  const accessLine = (i: number): string => JSON.stringify({ time: '2026-01-02T03:04:05.678Z', ...record(i) });

  it('should rotate access_log.log by size, keeping .1 (newest) to .keep and no line split across files', () => {
    // Two lines a file: r-1..r-10 go out as 5 files, of which the newest 3 are kept.
    const two = 2 * Buffer.byteLength(`${accessLine(1)}\n`);
    // One line a block, so the bound falls between lines; close() writes them all before it returns.
    const rotating = createServerLogger({
      level: 'info',
      logDir: dir,
      console: 'off',
      nowMs: () => T0,
      rotation: { maxBytes: two, keep: 2 },
      accessWriteBytes: 1,
    });
    for (let i = 1; i <= 10; i++) rotating.access(record(i));
    rotating.close();
    expect(
      fs
        .readdirSync(dir)
        .filter((f) => f.startsWith(ACCESS_LOG_FILE))
        .sort(),
    ).to.deep.equal([ACCESS_LOG_FILE, `${ACCESS_LOG_FILE}.1`, `${ACCESS_LOG_FILE}.2`]);
    expect([lines(`${ACCESS_LOG_FILE}.2`), lines(`${ACCESS_LOG_FILE}.1`), lines(ACCESS_LOG_FILE)]).to.deep.equal([
      [accessLine(5), accessLine(6)],
      [accessLine(7), accessLine(8)],
      [accessLine(9), accessLine(10)],
    ]);
    expect(rotating.accessDropped()).to.equal(0);
  });

  it('should rotate ts_log.log by size like the other logs, each record on disk as it is logged', () => {
    const rec = (i: number): string => `{"level":"info",${HEAD},"msg":"record ${i}"}`;
    const two = 2 * Buffer.byteLength(`${rec(1)}\n`);
    const logger = createServerLogger({
      level: 'info',
      logDir: dir,
      console: 'off',
      nowMs: () => T0,
      rotation: { maxBytes: two, keep: 2 },
    });
    for (let i = 1; i <= 7; i++) logger.log.info(`record ${i}`);
    expect(lines(TS_LOG_FILE)).to.deep.equal([rec(7)]); // synchronous: before any flush or close
    logger.close();
    expect(
      fs
        .readdirSync(dir)
        .filter((f) => f.startsWith(TS_LOG_FILE))
        .sort(),
    ).to.deep.equal([TS_LOG_FILE, `${TS_LOG_FILE}.1`, `${TS_LOG_FILE}.2`]);
    expect([lines(`${TS_LOG_FILE}.2`), lines(`${TS_LOG_FILE}.1`), lines(TS_LOG_FILE)]).to.deep.equal([
      [rec(3), rec(4)],
      [rec(5), rec(6)],
      [rec(7)],
    ]);
  });

  it('should count a failed rotation of access_log.log once in the counter given later, warn in ts_log.log and write on', () => {
    // access_log.log.1 a directory with a file in it: making room for the rotation fails, even for root.
    fs.mkdirSync(path.join(dir, `${ACCESS_LOG_FILE}.1`));
    fs.writeFileSync(path.join(dir, `${ACCESS_LOG_FILE}.1`, 'x'), 'x');
    const one = Buffer.byteLength(`${accessLine(1)}\n`);
    const logger = createServerLogger({
      level: 'info',
      logDir: dir,
      console: 'off',
      nowMs: () => T0,
      rotation: { maxBytes: one, keep: 1 },
      accessWriteBytes: 1,
    });
    for (let i = 1; i <= 3; i++) logger.access(record(i));
    logger.flush(); // writes lines 2 and 3 synchronously: the rotation before line 2 fails, line 3 does not try again
    const counted: [string, string, number][] = [];
    logger.countErrorsIn((file, reason, n) => counted.push([file, reason, n]));
    expect(counted).to.deep.equal([[ACCESS_LOG_FILE, 'rotation_failed', 1]]);
    logger.close();
    expect(counted).to.deep.equal([[ACCESS_LOG_FILE, 'rotation_failed', 1]]);
    expect(lines(ACCESS_LOG_FILE)).to.deep.equal([accessLine(1), accessLine(2), accessLine(3)]);
    const blocked = path.join(dir, `${ACCESS_LOG_FILE}.1`);
    expect(lines(TS_LOG_FILE)).to.deep.equal([
      `{"level":"warn",${HEAD},"msg":"access log ${path.join(dir, ACCESS_LOG_FILE)}: rotation failed: SystemError [ERR_FS_EISDIR]: Path is a directory: rm returned EISDIR (is a directory) ${blocked}; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines); counted in tsserve_log_errors_total{file=\\"access_log.log\\",reason=\\"rotation_failed\\"}, and tried again at most once every 60 s"}`,
    ]);
  });

  it('should count a failed rotation of ts_log.log once and write its warning into ts_log.log itself, before the record that found it', () => {
    fs.mkdirSync(path.join(dir, `${TS_LOG_FILE}.1`));
    fs.writeFileSync(path.join(dir, `${TS_LOG_FILE}.1`, 'x'), 'x');
    const rec = (i: number): string => `{"level":"info",${HEAD},"msg":"record ${i}"}`;
    const logger = createServerLogger({
      level: 'info',
      logDir: dir,
      console: 'off',
      nowMs: () => T0,
      rotation: { maxBytes: Buffer.byteLength(`${rec(1)}\n`), keep: 1 },
    });
    const counted: [string, string, number][] = [];
    logger.countErrorsIn((file, reason, n) => counted.push([file, reason, n]));
    for (let i = 1; i <= 3; i++) logger.log.info(`record ${i}`);
    logger.close();
    expect(counted).to.deep.equal([[TS_LOG_FILE, 'rotation_failed', 1]]);
    const file = path.join(dir, TS_LOG_FILE);
    expect(lines(TS_LOG_FILE)).to.deep.equal([
      rec(1),
      `{"level":"warn",${HEAD},"msg":"server log ${file}: rotation failed: SystemError [ERR_FS_EISDIR]: Path is a directory: rm returned EISDIR (is a directory) ${file}.1; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines); counted in tsserve_log_errors_total{file=\\"ts_log.log\\",reason=\\"rotation_failed\\"}, and tried again at most once every 60 s"}`,
      rec(2),
      rec(3),
    ]);
  });

  it('should write every buffered access line and ts_log.log record when the process exits without close()', () => {
    const mod = path.resolve('dist/frontend/log/logger.js');
    // 30 access lines (under one block, on a 200 ms timer) and a record, then exit at once.
    const script = `
      const { createServerLogger } = await import(${JSON.stringify(mod)});
      const logger = createServerLogger({ level: 'info', logDir: ${JSON.stringify(dir)}, console: 'off', nowMs: () => ${T0} });
      for (let i = 1; i <= 30; i++) logger.access(${JSON.stringify(record(0))});
      logger.log.info('exiting');
      process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', script]);
    expect(lines(ACCESS_LOG_FILE)).to.deep.equal(Array.from({ length: 30 }, () => accessLine(0)));
    // The child's pid is its own: the rest of the record is exact.
    expect(lines(TS_LOG_FILE).map((l) => l.replace(/"pid":\d+,/, '"pid":PID,'))).to.deep.equal([
      `{"level":"info","time":"2026-01-02T03:04:05.678Z","pid":PID,"hostname":${JSON.stringify(os.hostname())},"msg":"exiting"}`,
    ]);
  });

  it('should write an access line within ACCESS_FLUSH_MS on a quiet server, without a flush or a full block', async () => {
    const logger = createServerLogger({ level: 'info', logDir: dir, console: 'off', nowMs: () => T0 });
    logger.access({
      listener: 'inference',
      port: 8080,
      method: 'GET',
      path: '/ping',
      status: 200,
      durationMs: 0.5,
      bytes: 20,
      requestId: 'r-2',
    });
    expect(fs.readFileSync(path.join(dir, ACCESS_LOG_FILE), 'utf8')).to.equal(''); // held: under one 8 KiB block
    const written = await until(
      () => (fs.readFileSync(path.join(dir, ACCESS_LOG_FILE), 'utf8') !== '' ? lines(ACCESS_LOG_FILE) : null),
      { message: 'the access line on disk', timeoutMs: 5000, intervalMs: 20 },
    );
    expect(written).to.deep.equal([
      '{"time":"2026-01-02T03:04:05.678Z","listener":"inference","port":8080,"method":"GET","path":"/ping","status":200,"durationMs":0.5,"bytes":20,"requestId":"r-2"}',
    ]);
    logger.close();
  });

  it('should drop, never throw, records made after close()', () => {
    const logger = createServerLogger({ level: 'info', logDir: dir, console: 'off', nowMs: () => T0 });
    const child = logger.log.child({ worker: 'w' });
    logger.close();
    expect(() => {
      logger.log.info('late');
      child.warn('late');
      logger.access({
        listener: 'metrics',
        port: 1,
        method: 'GET',
        path: '/',
        status: 200,
        durationMs: 0,
        bytes: 0,
        requestId: 'x',
      });
    }).to.not.throw();
    expect(fs.readFileSync(path.join(dir, TS_LOG_FILE), 'utf8')).to.equal('');
  });
});
