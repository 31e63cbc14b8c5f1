/** `tsserve serve DIR`: the refusals before anything starts (a real start is test/e2e/hf-serve.test.ts). */
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const CLI = path.resolve(import.meta.dirname, '..', '..', '..', 'bin', 'tsserve.js');

/** Runs the CLI; its exit code and what it printed. */
function tsserve(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('tsserve serve DIR (argument refusals)', () => {
  let dir = '';
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-cli-serve-'));
    fs.mkdirSync(path.join(dir, 'my-model'));
    fs.mkdirSync(path.join(dir, 'bad name'));
    fs.writeFileSync(path.join(dir, 'file'), 'x');
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should print its usage with exit 2 when given no directory', () => {
    const r = tsserve('serve');
    expect([r.status, r.stdout.split('\n')[0]]).to.deep.equal([2, 'Usage: tsserve serve DIR [options]']);
  });

  it('should refuse a missing directory, a file, and a flag before the directory', () => {
    expect(tsserve('serve', path.join(dir, 'nope'))).to.deep.include({
      status: 2,
      stderr: `tsserve serve: model directory ${path.join(dir, 'nope')} does not exist\n`,
    });
    expect(tsserve('serve', path.join(dir, 'file'))).to.deep.include({
      status: 2,
      stderr: `tsserve serve: ${path.join(dir, 'file')} is not a directory\n`,
    });
    expect(tsserve('serve', '--port', '9000')).to.deep.include({
      status: 2,
      stderr: 'tsserve serve: the model directory comes first: tsserve serve DIR [options] (got --port)\n',
    });
  });

  it('should refuse --model-store and --models, which DIR sets, and a bad --port', () => {
    const d = path.join(dir, 'my-model');
    expect(tsserve('serve', d, '--models', 'a=b')).to.deep.include({
      status: 2,
      stderr:
        'tsserve serve: --models: serve DIR serves DIR alone (its parent is the store); use tsserve start for a store\n',
    });
    expect(tsserve('serve', d, '--model-store=/tmp')).to.deep.include({
      status: 2,
      stderr:
        'tsserve serve: --model-store: serve DIR serves DIR alone (its parent is the store); use tsserve start for a store\n',
    });
    expect(tsserve('serve', d, '--port', '70000')).to.deep.include({
      status: 2,
      stderr: "tsserve serve: --port: '70000' is not a port\n",
    });
    expect(tsserve('serve', d, '--port', '9000', '--inference-address', 'http://127.0.0.1:9001')).to.deep.include({
      status: 2,
      stderr: 'tsserve serve: --port/--host and --inference-address both set the inference listener; give one\n',
    });
  });

  it('should refuse a directory whose name is no model name unless --served-model-name gives one', () => {
    expect(tsserve('serve', path.join(dir, 'bad name'))).to.deep.include({
      status: 2,
      stderr:
        "tsserve serve: 'bad name' is not a model name (letters, digits, '_', '.', '-'); give one with --served-model-name\n",
    });
  });
});
