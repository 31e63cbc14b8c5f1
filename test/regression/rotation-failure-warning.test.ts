/**
 * Issue 26 item 6: after a failed rotation the warning said "writing on in the current file",
 * while the next write reopened the file, failed and lost lines (counted correctly; the text was
 * wrong). The warning now says the file is reopened, and what a failing reopen costs.
 */
import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RotatingFile } from '../../frontend/log/rotating-file.js';
import { captureLog } from '../frontend/metrics/make-config.js';

describe('regression: the rotation-failure warning says what happens (issue 26 item 6)', () => {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-rotation-warning-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('should warn that the file is reopened, then count and warn the lines a failing reopen loses', async () => {
    const file = path.join(dir, 'ts_metrics.log');
    // `.1` a non-empty directory: the rotation's first step (removing the oldest copy) fails.
    fs.mkdirSync(`${file}.1`);
    fs.writeFileSync(path.join(`${file}.1`, 'x'), '');
    const log = captureLog();
    let lost = 0;
    const f = new RotatingFile(file, {
      label: 'metrics log',
      flushMs: 60_000,
      chunkChars: 1 << 20,
      maxQueueChars: 1 << 22,
      maxBytes: 20,
      keep: 1,
      log: log.log,
      nowMs: () => 0,
      onLost: (n) => (lost += n),
      countedIn: 'tsserve_log_errors_total{file="ts_metrics.log",reason="write_failed"}',
    });
    f.append('line-1-0123456789\n');
    await f.flush();
    // The file is replaced by a directory: the reopen after the failed rotation fails too.
    fs.rmSync(file);
    fs.mkdirSync(file);
    f.append('line-2-0123456789\n');
    await f.close();
    expect(lost).to.equal(1);
    expect(log.lines.map((l) => l.replace(/rotation failed: .*?; /, 'rotation failed: E; '))).to.deep.equal([
      `warn: metrics log ${file}: rotation failed: E; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines), and tried again at most once every 60 s`,
      `warn: metrics log ${file}: Error: EISDIR: illegal operation on a directory, open '${file}'; 1 line(s) lost; every lost line is counted in tsserve_log_errors_total{file="ts_metrics.log",reason="write_failed"}, and this warning repeats at most once every 60 s while lines are lost`,
    ]);
  });
});
