import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { isInside, resolveInModelDir } from '../../../backend/worker/model-path.js';

describe('resolveInModelDir', () => {
  let tmp: string;
  let dir: string;
  beforeEach(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-mpath-')));
    dir = path.join(tmp, 'model');
    fs.mkdirSync(path.join(dir, 'lib'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'handler.js'), '');
    fs.writeFileSync(path.join(dir, 'lib', 'h.cjs'), '');
    fs.writeFileSync(path.join(tmp, 'outside.js'), '');
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('should resolve a file, a subfolder file and a name without extension', () => {
    expect(resolveInModelDir(dir, 'handler.js')).to.deep.equal({ ok: true, file: path.join(dir, 'handler.js') });
    expect(resolveInModelDir(dir, 'handler', ['.js'])).to.deep.equal({ ok: true, file: path.join(dir, 'handler.js') });
    expect(resolveInModelDir(dir, './lib/h', ['.js', '.cjs'])).to.deep.equal({
      ok: true,
      file: path.join(dir, 'lib', 'h.cjs'),
    });
  });

  it('should accept a symlink whose target stays inside the model dir', () => {
    fs.symlinkSync(path.join(dir, 'lib', 'h.cjs'), path.join(dir, 'alias.js'));
    expect(resolveInModelDir(dir, 'alias.js')).to.deep.equal({ ok: true, file: path.join(dir, 'lib', 'h.cjs') });
  });

  it('should refuse .. escapes, absolute paths, outward symlinks, folders and missing files', () => {
    expect(resolveInModelDir(dir, '../outside.js')).to.deep.equal({
      ok: false,
      error: `"../outside.js" resolves outside the model directory ${dir}`,
    });
    expect(resolveInModelDir(dir, 'lib/../../outside.js')).to.deep.equal({
      ok: false,
      error: `"lib/../../outside.js" resolves outside the model directory ${dir}`,
    });
    expect(resolveInModelDir(dir, path.join(tmp, 'outside.js'))).to.deep.equal({
      ok: false,
      error: `"${path.join(tmp, 'outside.js')}" must be relative to the model directory`,
    });
    fs.symlinkSync(tmp, path.join(dir, 'up'));
    expect(resolveInModelDir(dir, 'up/outside.js')).to.deep.equal({
      ok: false,
      error: `"up/outside.js" is a symlink to ${path.join(tmp, 'outside.js')}, outside the model directory ${dir}`,
    });
    expect(resolveInModelDir(dir, 'lib')).to.deep.equal({
      ok: false,
      error: `"lib" not found in the model directory ${dir}`,
    });
    expect(resolveInModelDir(dir, 'nope.js')).to.deep.equal({
      ok: false,
      error: `"nope.js" not found in the model directory ${dir}`,
    });
    expect(resolveInModelDir(dir, '')).to.deep.equal({ ok: false, error: 'invalid path ""' });
  });

  it('should anchor on the real model dir when the model dir itself is a symlink', () => {
    const link = path.join(tmp, 'model-link');
    fs.symlinkSync(dir, link);
    expect(resolveInModelDir(link, 'handler.js')).to.deep.equal({ ok: true, file: path.join(dir, 'handler.js') });
  });
});

describe('isInside', () => {
  it('should not be fooled by a sibling sharing a prefix', () => {
    expect(isInside('/a/model', '/a/model-evil/x.js')).to.equal(false);
    expect(isInside('/a/model', '/a/model/x.js')).to.equal(true);
    expect(isInside('/a/model', '/a/model')).to.equal(true);
    expect(isInside('/a/model', '/a/model/..x/y')).to.equal(true);
  });
});
