/** notADirectory: the one "exists and is not a directory" refusal of the CLI's directory flags. */
import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { notADirectory } from '../../tools/cli/dir-arg.js';

describe('notADirectory', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-dir-arg-'));
    fs.writeFileSync(path.join(dir, 'file'), 'x');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should refuse a path that exists and is not a directory, naming the flag and the path, with the reason when given', () => {
    const file = path.join(dir, 'file');
    expect([notADirectory('output-dir', file), notADirectory('out', file, 'the dashboards are three files')]).to.deep.equal([
      `--output-dir: ${file} exists and is not a directory`,
      `--out: ${file} exists and is not a directory (the dashboards are three files)`,
    ]);
  });

  it('should accept a directory, a missing path, and a path under a file (left to the mkdir that follows)', () => {
    expect([dir, path.join(dir, 'missing', 'deeper'), path.join(dir, 'file', 'under')].map((p) => notADirectory('out', p))).to.deep.equal([null, null, null]);
  });
});
