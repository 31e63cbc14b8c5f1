import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  ModelFileError,
  excerpt,
  openModelFile,
  readModelFile,
  readModelText,
  resolveModelFile,
} from '../../../schema/files/model-file.js';

/** The ModelFileError a read rejects with, as {problem, message}; the test fails on anything else. */
async function refusal(p: Promise<unknown>): Promise<{ problem: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ModelFileError) return { problem: e.problem, message: e.message };
    throw e;
  }
  throw new Error('the read was not refused');
}

describe('schema/files/model-file', () => {
  let root = '';
  let store = '';
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-model-file-'));
    store = path.join(root, 'store');
    fs.mkdirSync(path.join(store, 'm'), { recursive: true });
    fs.writeFileSync(path.join(store, 'm', 'model-config.yaml'), 'handler: onnx\n');
    fs.writeFileSync(path.join(root, 'secret.txt'), 'SECRET-TOKEN-abc123\n');
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('should read a regular file inside the store, by a path relative to it or absolute', async () => {
    expect(await readModelText(store, 'm/model-config.yaml')).to.equal('handler: onnx\n');
    const abs = path.join(store, 'm', 'model-config.yaml');
    expect((await readModelFile(store, abs, 100)).toString()).to.equal('handler: onnx\n');
    expect(await resolveModelFile(store, 'm/model-config.yaml')).to.equal(fs.realpathSync(abs));
  });

  it('should refuse a symlink leading out of the store without reading or echoing what it points to', async () => {
    fs.symlinkSync(path.join(root, 'secret.txt'), path.join(store, 'm', 'leak.yaml'));
    expect(await refusal(readModelText(store, 'm/leak.yaml'))).to.deep.equal({
      problem: 'outside_store',
      message: 'm/leak.yaml: resolves outside the model store',
    });
  });

  it('should refuse a symlink to /dev/zero as outside the store, and /dev/zero itself as not regular', async () => {
    fs.symlinkSync('/dev/zero', path.join(store, 'm', 'zero.yaml'));
    expect(await refusal(readModelText(store, 'm/zero.yaml'))).to.deep.equal({
      problem: 'outside_store',
      message: 'm/zero.yaml: resolves outside the model store',
    });
    expect(await refusal(readModelFile('/dev', 'zero', 1024))).to.deep.equal({
      problem: 'not_regular',
      message: 'zero: not a regular file',
    });
  });

  it('should refuse a FIFO without waiting for a writer', async () => {
    execFileSync('mkfifo', [path.join(store, 'm', 'fifo.yaml')]);
    expect(await refusal(readModelText(store, 'm/fifo.yaml'))).to.deep.equal({
      problem: 'not_regular',
      message: 'm/fifo.yaml: not a regular file',
    });
    expect(await refusal(openModelFile(store, 'm/fifo.yaml'))).to.deep.equal({
      problem: 'not_regular',
      message: 'm/fifo.yaml: not a regular file',
    });
  });

  it('should refuse a directory', async () => {
    expect(await refusal(readModelText(store, 'm'))).to.deep.equal({
      problem: 'not_regular',
      message: 'm: not a regular file',
    });
  });

  it('should refuse a file over the bound before reading it (a sparse 200 MB file)', async () => {
    const big = path.join(store, 'm', 'big.yaml');
    fs.closeSync(fs.openSync(big, 'w'));
    fs.truncateSync(big, 200 * 1024 * 1024);
    expect(await refusal(readModelText(store, 'm/big.yaml', 1024 * 1024))).to.deep.equal({
      problem: 'too_large',
      message: 'm/big.yaml: 209715200 bytes, over the bound of 1048576',
    });
  });

  it('should read a file that grew within the bound since its size was taken, and refuse one that grew past it', async () => {
    // /proc files report size 0 and then yield their content: a file growing after fstat.
    const grown = await readModelFile('/proc/self', 'status', 64 * 1024);
    expect(grown.toString().startsWith('Name:')).to.equal(true);
    expect(await refusal(readModelFile('/proc/self', 'status', 8))).to.deep.equal({
      problem: 'too_large',
      message: 'status: grew past the bound of 8 bytes while read',
    });
  });

  it('should name a missing file, and a path through a missing directory, as missing', async () => {
    expect(await refusal(readModelText(store, 'm/none.yaml'))).to.deep.equal({
      problem: 'missing',
      message: 'm/none.yaml: no such file',
    });
    expect(await refusal(readModelText(store, 'm/model-config.yaml/x'))).to.deep.equal({
      problem: 'missing',
      message: 'm/model-config.yaml/x: no such file',
    });
  });

  it('should cut an excerpt to its bound, escaped, with how many characters were left out', () => {
    expect(excerpt('short')).to.equal('"short"');
    expect(excerpt('a\nb', 80)).to.equal('"a\\nb"');
    expect(excerpt('x'.repeat(900_001), 10)).to.equal('"xxxxxxxxxx"…(899991 more)');
    // A pair is one character of the excerpt, never split in half.
    expect(excerpt('😀'.repeat(5), 2)).to.equal('"😀😀"…(6 more)');
  });
});
