import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RotatingFile } from '../../../frontend/log/rotating-file.js';
import { FileFollower, rotatedPaths } from '../../../tools/tail/follow.js';

describe('FileFollower', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-tail-'));
    file = path.join(dir, 'ts_metrics.log');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("should see every line once, in order, across the sink's own rotations", async () => {
    // 10-byte lines, 35-byte files: RotatingFile rotates before every fourth line.
    const log = new RotatingFile(file, {
      label: 'metrics log',
      maxBytes: 35,
      keep: 3,
      flushMs: 1,
      chunkChars: 1,
      maxQueueChars: 1 << 20,
      log: () => undefined,
    });
    const follower = new FileFollower(file);
    const seen: string[] = [];
    const line = (i: number): string => `line-${String(i).padStart(4, '0')}`;
    for (let i = 0; i < 20; i++) {
      log.append(line(i) + '\n');
      await log.flush();
      seen.push(...follower.poll());
    }
    await log.close();
    seen.push(...follower.poll());
    follower.close();
    expect(seen).to.deep.equal(Array.from({ length: 20 }, (_v, i) => line(i)));
    expect(rotatedPaths(file).map((p) => path.basename(p))).to.deep.equal([
      'ts_metrics.log.3',
      'ts_metrics.log.2',
      'ts_metrics.log.1',
    ]);
  });

  it('should hold a partial line until its newline arrives', () => {
    const follower = new FileFollower(file);
    expect(follower.poll()).to.deep.equal([]);
    fs.writeFileSync(file, 'a\nb');
    expect(follower.poll()).to.deep.equal(['a']);
    fs.appendFileSync(file, 'c\nd\n');
    expect(follower.poll()).to.deep.equal(['bc', 'd']);
    expect(follower.poll()).to.deep.equal([]);
    follower.close();
  });

  it('should read the rest of a renamed file, then the new file from its start', () => {
    const follower = new FileFollower(file);
    fs.writeFileSync(file, 'one\n');
    expect(follower.poll()).to.deep.equal(['one']);
    fs.appendFileSync(file, 'two\nunfinished');
    fs.renameSync(file, `${file}.1`);
    fs.writeFileSync(file, 'three\n');
    expect(follower.poll()).to.deep.equal(['two', 'unfinished', 'three']);
    follower.close();
  });

  it('should read a truncated file again from its start', () => {
    const follower = new FileFollower(file);
    fs.writeFileSync(file, 'first line\nsecond line\n');
    expect(follower.poll()).to.deep.equal(['first line', 'second line']);
    fs.truncateSync(file, 0);
    fs.appendFileSync(file, 'after\n');
    expect(follower.poll()).to.deep.equal(['after']);
    follower.close();
  });

  it('should wait for a file that does not exist yet and keep multi-byte characters whole', () => {
    const follower = new FileFollower(file);
    expect(follower.poll()).to.deep.equal([]);
    const text = 'ü'.repeat(40_000) + '\n';
    fs.writeFileSync(file, text);
    expect(follower.poll()).to.deep.equal([text.slice(0, -1)]);
    follower.close();
  });
});
