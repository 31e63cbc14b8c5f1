/**
 * Issue 26 item 2: model-config.yaml was read whole and synchronously with readFileSync, following
 * links: a symlink to /dev/zero took the frontend to 9.5 GB, a FIFO froze the event loop, a 200 MB
 * file blocked 3.4 s, and a symlink to an outside file echoed its content in the 400. A FIFO
 * model.onnx blocked the frontend on `GET /v2/models/{m}`. Each is now a named refusal.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { modelIoOf } from '../../frontend/http/oip/io-cache.js';
import type { ServedModel } from '../../frontend/models/served-model.js';
import { loadModelConfig } from '../../frontend/store/model-config.js';

describe('regression: model files read like requests (issue 26 item 2)', () => {
  let store = '';
  const dirOf = (name: string): string => {
    const dir = path.join(store, name);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  };
  before(() => {
    store = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-model-reads-'));
    fs.writeFileSync(path.join(store, 'secret.txt'), 'SECRET-TOKEN-abc123\n');
  });
  after(() => {
    fs.rmSync(store, { recursive: true, force: true });
  });

  it('should refuse a model-config.yaml linked to /dev/zero as outside the model directory, reading nothing', async () => {
    const dir = dirOf('zero');
    fs.symlinkSync('/dev/zero', path.join(dir, 'model-config.yaml'));
    expect(await loadModelConfig('zero', dir)).to.deep.equal({
      ok: false,
      problems: [`${dir}/model-config.yaml: resolves outside the model store`],
    });
  });

  it('should refuse a FIFO model-config.yaml without waiting for a writer', async () => {
    const dir = dirOf('fifo');
    execFileSync('mkfifo', [path.join(dir, 'model-config.yaml')]);
    expect(await loadModelConfig('fifo', dir)).to.deep.equal({
      ok: false,
      problems: [`${dir}/model-config.yaml: not a regular file`],
    });
  });

  it('should refuse a 200 MB model-config.yaml by its size, before reading it', async () => {
    const dir = dirOf('big');
    const file = path.join(dir, 'model-config.yaml');
    fs.closeSync(fs.openSync(file, 'w'));
    fs.truncateSync(file, 200 * 1024 * 1024);
    expect(await loadModelConfig('big', dir)).to.deep.equal({
      ok: false,
      problems: [`${file}: 209715200 bytes, over the bound of 1048576`],
    });
  });

  it("should refuse a model-config.yaml linked to a file outside the store without echoing that file's content", async () => {
    const dir = dirOf('leak');
    fs.symlinkSync(path.join(store, 'secret.txt'), path.join(dir, 'model-config.yaml'));
    const r = await loadModelConfig('leak', dir);
    expect(r).to.deep.equal({ ok: false, problems: [`${dir}/model-config.yaml: resolves outside the model store`] });
    expect(JSON.stringify(r)).not.to.include('SECRET');
  });

  it('should refuse a FIFO model.onnx of a built-in handler at the model: key', async () => {
    const dir = dirOf('fifo-onnx');
    fs.writeFileSync(path.join(dir, 'model-config.yaml'), 'handler: onnx\nmodel: model.onnx\n');
    execFileSync('mkfifo', [path.join(dir, 'model.onnx')]);
    expect(await loadModelConfig('fifo-onnx', dir)).to.deep.equal({
      ok: false,
      problems: [`${dir}/model-config.yaml:2:8: model: 'model.onnx' is not a regular file (a FIFO)`],
    });
  });

  it('should answer no IO for a model.onnx that became a FIFO after registration, without waiting for a writer', async () => {
    const dir = dirOf('late-fifo');
    execFileSync('mkfifo', [path.join(dir, 'model.onnx')]);
    const served = { config: { dir, modelFile: 'model.onnx' } } as unknown as ServedModel;
    expect(await modelIoOf(served)).to.equal(null);
  });

  it('should cut a long bad value of model-config.yaml to an excerpt in the problem', async () => {
    const dir = dirOf('long');
    fs.writeFileSync(
      path.join(dir, 'model-config.yaml'),
      `handler: onnx\nmodel: m.onnx\nbatchSize: "${'9'.repeat(900_001)}"\n`,
    );
    fs.writeFileSync(path.join(dir, 'm.onnx'), '');
    expect(await loadModelConfig('long', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${dir}/model-config.yaml:3:12: batchSize: must be an integer from 1 to 1024 (got "${'9'.repeat(80)}"…(899921 more))`,
      ],
    });
  });
});
