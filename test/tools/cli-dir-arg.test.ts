/**
 * notADirectory: the one "exists and is not a directory" refusal of the CLI's directory flags;
 * makeDirs: mkdir -p that fails where Node 20's recursive mkdir retried forever.
 */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { makeDirs, notADirectory } from '../../tools/cli/dir-arg.js';

describe('notADirectory', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-dir-arg-'));
    fs.writeFileSync(path.join(dir, 'file'), 'x');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should refuse a path that exists and is not a directory, naming the flag and the path, with the reason when given', () => {
    const file = path.join(dir, 'file');
    expect([
      notADirectory('output-dir', file),
      notADirectory('out', file, 'the dashboards are three files'),
    ]).to.deep.equal([
      `--output-dir: ${file} exists and is not a directory`,
      `--out: ${file} exists and is not a directory (the dashboards are three files)`,
    ]);
  });

  it('should accept a directory, a missing path, and a path under a file (left to the mkdir that follows)', () => {
    expect(
      [dir, path.join(dir, 'missing', 'deeper'), path.join(dir, 'file', 'under')].map((p) => notADirectory('out', p)),
    ).to.deep.equal([null, null, null]);
  });
});

describe('makeDirs', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-make-dirs-'));
    fs.writeFileSync(path.join(dir, 'file'), 'x');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should create every missing level and accept a directory that exists', () => {
    makeDirs(path.join(dir, 'a', 'b', 'c'));
    makeDirs(path.join(dir, 'a', 'b'));
    expect(['a', 'a/b', 'a/b/c'].map((p) => fs.statSync(path.join(dir, p)).isDirectory())).to.deep.equal([
      true,
      true,
      true,
    ]);
  });

  it("should throw mkdir's own error under a file (ENOTDIR) and under /proc (ENOENT), where Node 20's recursive mkdir never returned", () => {
    const code = (p: string): string | undefined => {
      try {
        makeDirs(p);
        return undefined;
      } catch (e) {
        return `${(e as NodeJS.ErrnoException).code} ${(e as NodeJS.ErrnoException).path}`;
      }
    };
    expect([code(path.join(dir, 'file', 'under')), code('/proc/tsserve-make-dirs/x')]).to.deep.equal([
      `ENOTDIR ${path.join(dir, 'file', 'under')}`,
      'ENOENT /proc/tsserve-make-dirs',
    ]);
  });
});
