import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { ACCESS_LOG_FILE, TS_LOG_FILE, createServerLogger } from '../../../frontend/log/logger.js';
import { until } from '../../support/until.js';

const T0 = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
const HEAD = `"time":"2026-01-02T03:04:05.678Z","pid":${process.pid},"hostname":${JSON.stringify(os.hostname())}`;

describe('createServerLogger', () => {
  let dir: string;
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-log-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const lines = (file: string): string[] => fs.readFileSync(path.join(dir, file), 'utf8').split('\n').filter((l) => l !== '');

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
    logger.access({ listener: 'inference', port: 8080, method: 'POST', path: '/predictions/mlp', status: 200, durationMs: 1.25, bytes: 42, requestId: 'r-1' });
    logger.close();
    expect(lines(ACCESS_LOG_FILE)).to.deep.equal([
      '{"time":"2026-01-02T03:04:05.678Z","listener":"inference","port":8080,"method":"POST","path":"/predictions/mlp","status":200,"durationMs":1.25,"bytes":42,"requestId":"r-1"}',
    ]);
    expect(logger.accessDropped()).to.equal(0);
  });

  it('should rotate access_log.log by size, keeping .1 (newest) to .keep and no line split across files', async () => {
    const record = (i: number) => ({ listener: 'inference', port: 8080, method: 'POST', path: '/predictions/mlp', status: 200, durationMs: 1.25, bytes: 42, requestId: `r-${String(i).padStart(2, '0')}` }); // every line the same length
    const line = (i: number): string => JSON.stringify({ time: '2026-01-02T03:04:05.678Z', ...record(i) });
    // Two lines a file: r-1..r-10 go out as 5 files, of which the newest 3 are kept.
    const two = 2 * Buffer.byteLength(`${line(1)}\n`);
    const rotating = createServerLogger({ level: 'info', logDir: dir, console: 'off', nowMs: () => T0, accessRotation: { maxBytes: two, keep: 2 } });
    for (let i = 1; i <= 10; i++) rotating.access(record(i));
    rotating.close();
    const want: Record<string, string[]> = { [ACCESS_LOG_FILE]: [line(9), line(10)], [`${ACCESS_LOG_FILE}.1`]: [line(7), line(8)], [`${ACCESS_LOG_FILE}.2`]: [line(5), line(6)] };
    // A rotated file's last lines are written by its old writer as it ends, after close() returns.
    await until(() => Object.entries(want).every(([f, l]) => fs.existsSync(path.join(dir, f)) && JSON.stringify(lines(f)) === JSON.stringify(l)) ? true : null,
      { message: 'the rotated access logs', observe: () => Object.keys(want).map((f) => (fs.existsSync(path.join(dir, f)) ? lines(f) : null)) });
    expect(fs.readdirSync(dir).filter((f) => f.startsWith(ACCESS_LOG_FILE)).sort()).to.deep.equal([ACCESS_LOG_FILE, `${ACCESS_LOG_FILE}.1`, `${ACCESS_LOG_FILE}.2`]);
    expect(rotating.accessDropped()).to.equal(0);
  });

  it('should write an access line within ACCESS_FLUSH_MS on a quiet server, without a flush or a full block', async () => {
    const logger = createServerLogger({ level: 'info', logDir: dir, console: 'off', nowMs: () => T0 });
    logger.access({ listener: 'inference', port: 8080, method: 'GET', path: '/ping', status: 200, durationMs: 0.5, bytes: 20, requestId: 'r-2' });
    expect(fs.readFileSync(path.join(dir, ACCESS_LOG_FILE), 'utf8')).to.equal(''); // held: under one 8 KiB block
    const written = await until(() => (fs.readFileSync(path.join(dir, ACCESS_LOG_FILE), 'utf8') !== '' ? lines(ACCESS_LOG_FILE) : null), { message: 'the access line on disk', timeoutMs: 5000, intervalMs: 20 });
    expect(written).to.deep.equal([
      '{"time":"2026-01-02T03:04:05.678Z","listener":"inference","port":8080,"method":"GET","path":"/ping","status":200,"durationMs":0.5,"bytes":20,"requestId":"r-2"}',
    ]);
    logger.close();
  });

  it('should drop, never throw, records made after close()', () => {
    const logger = createServerLogger({ level: 'info', logDir: dir, console: 'off', nowMs: () => T0 });
    const child = logger.log.child({ worker: 'w' });
    logger.close();
    expect(() => { logger.log.info('late'); child.warn('late'); logger.access({ listener: 'metrics', port: 1, method: 'GET', path: '/', status: 200, durationMs: 0, bytes: 0, requestId: 'x' }); }).to.not.throw();
    expect(fs.readFileSync(path.join(dir, TS_LOG_FILE), 'utf8')).to.equal('');
  });
});
