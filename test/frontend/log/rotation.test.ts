import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { rotateAsync, rotateSync } from '../../../frontend/log/rotation.js';

describe('rotateSync and rotateAsync', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-rotation-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Every file of the directory with its content. */
  const contents = (): Record<string, string> =>
    Object.fromEntries(
      fs
        .readdirSync(dir)
        .sort()
        .map((n) => [n, fs.readFileSync(path.join(dir, n), 'utf8')]),
    );

  for (const [name, rotate] of [
    ['rotateSync', async (p: string, k: number) => rotateSync(p, k)],
    ['rotateAsync', rotateAsync],
  ] as const) {
    it(`${name} should drop .keep, move the others up one (a gap stays a gap) and the file to .1`, async () => {
      const p = path.join(dir, 'x.log');
      for (const [n, c] of [
        ['x.log', 'now'],
        ['x.log.2', 'two'],
        ['x.log.3', 'three'],
        ['other.log.1', 'other'],
      ])
        fs.writeFileSync(path.join(dir, n), c);
      await rotate(p, 3);
      expect(contents()).to.deep.equal({ 'other.log.1': 'other', 'x.log.1': 'now', 'x.log.3': 'two' });
      await rotate(p, 3); // no x.log: only the copies move
      expect(contents()).to.deep.equal({ 'other.log.1': 'other', 'x.log.2': 'now' });
    });

    it(`${name} should remove the file when keep is 0`, async () => {
      const p = path.join(dir, 'x.log');
      fs.writeFileSync(p, 'now');
      await rotate(p, 0);
      expect(contents()).to.deep.equal({});
    });

    it(`${name} should throw when .keep is a directory with a file in it, and move nothing`, async () => {
      const p = path.join(dir, 'x.log');
      fs.writeFileSync(p, 'now');
      fs.mkdirSync(`${p}.1`);
      fs.writeFileSync(path.join(`${p}.1`, 'f'), 'f');
      let thrown: unknown = null;
      try {
        await rotate(p, 1);
      } catch (err) {
        thrown = err;
      }
      expect(String(thrown)).to.equal(
        `SystemError [ERR_FS_EISDIR]: Path is a directory: rm returned EISDIR (is a directory) ${p}.1`,
      );
      expect(fs.readFileSync(p, 'utf8')).to.equal('now');
    });
  }
});
