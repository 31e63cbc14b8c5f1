import { expect } from 'chai';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadModelConfig } from '../../../frontend/store/model-config.js';
import { ModelStore } from '../../../frontend/store/model-store.js';
import { resolveInside } from '../../../frontend/store/safe-path.js';

describe('Model store', () => {
  let root: string;
  let outside: string;
  before(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-store-'));
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-outside-'));
    fs.mkdirSync(path.join(root, 'm'));
    fs.writeFileSync(path.join(root, 'm', 'model.onnx'), 'x');
    fs.writeFileSync(
      path.join(root, 'm', 'model-config.yaml'),
      'handler: onnx\nmodel: model.onnx\nbatchSize: 4\nmaxBatchDelay: 7\nminWorkers: 2\nmaxWorkers: 3\nresponseTimeout: 9\nthreads: 2\nextra: 1\n',
    );
    fs.writeFileSync(path.join(outside, 'evil.js'), '');
    fs.symlinkSync(path.join(outside, 'evil.js'), path.join(root, 'm', 'link.js'));
    fs.symlinkSync(outside, path.join(root, 'escape'));
  });
  after(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('should parse a model-config.yaml into a ModelConfig, warning about unknown keys', async () => {
    const dir = path.join(fs.realpathSync(root), 'm');
    const r = await loadModelConfig('m', dir);
    expect(r).to.deep.equal({
      ok: true,
      config: {
        name: 'm',
        version: '1.0',
        dir,
        handler: 'onnx',
        modelFile: 'model.onnx',
        batchSize: 4,
        maxBatchDelayMs: 7,
        minWorkers: 2,
        maxWorkers: 3,
        responseTimeoutSec: 9,
        threads: 2,
      },
      warnings: [`${dir}/model-config.yaml:9:1: extra: unknown key ignored`],
    });
  });

  it('should take version: as a string (default 1.0) and refuse a YAML number or a bad string', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-ver-'));
    const f = `${dir}/model-config.yaml`;
    const versionOf = async (line: string): Promise<unknown> => {
      fs.writeFileSync(f, `handler: h.js\n${line}\n`);
      const r = await loadModelConfig('v', dir);
      return r.ok ? r.config.version : r.problems;
    };
    fs.writeFileSync(path.join(dir, 'h.js'), '');
    try {
      expect(await versionOf('')).to.equal('1.0');
      expect(await versionOf('version: "2.0"')).to.equal('2.0');
      expect(await versionOf('version: v3_beta-1')).to.equal('v3_beta-1');
      expect(await versionOf('version: 1.0')).to.deep.equal([
        `${f}:2:10: version: must be a string: quote it, e.g. version: "1.0" (YAML reads an unquoted 1.0 as the number 1; got 1)`,
      ]);
      expect(await versionOf(`version: "${'1'.repeat(128)}"`)).to.equal('1'.repeat(128));
      expect(await versionOf(`version: "${'1'.repeat(129)}"`)).to.deep.equal([
        `${f}:2:10: version: is 129 characters, at most 128`,
      ]);
      expect(await versionOf('version: "1/0"')).to.deep.equal([
        `${f}:2:10: version: must be a string of letters, digits, '.', '_' or '-' starting with a letter or digit (got "1/0")`,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("should report every problem of an invalid model-config at once, in the file's order", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bad-'));
    fs.writeFileSync(
      path.join(dir, 'model-config.yaml'),
      'handler: ../../x.js\nbatchSize: 0\nminWorkers: 3\nmaxWorkers: 1\n',
    );
    const r = await loadModelConfig('b', dir);
    fs.rmSync(dir, { recursive: true, force: true });
    const f = `${dir}/model-config.yaml`;
    expect(r).to.deep.equal({
      ok: false,
      problems: [
        `${f}:1:10: handler: path '../../x.js' must not contain '..'`,
        `${f}:2:12: batchSize: must be an integer from 1 to 1024 (got 0)`,
        `${f}:4:13: maxWorkers: must be >= minWorkers (1 < 3)`,
      ],
    });
  });

  it('should refuse timers and counts past their bounds (a responseTimeout over 2^31-1 ms fired at once)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bounds-'));
    const f = `${dir}/model-config.yaml`;
    try {
      fs.writeFileSync(path.join(dir, 'h.js'), '');
      fs.writeFileSync(
        f,
        'handler: h.js\nresponseTimeout: 3000000\nmaxBatchDelay: 60001\nbatchSize: 1025\nminWorkers: 2000\nmaxWorkers: 1e20\nthreads: 4096\n',
      );
      expect(await loadModelConfig('b', dir)).to.deep.equal({
        ok: false,
        problems: [
          `${f}:2:18: responseTimeout: must be an integer from 1 to 86400 seconds (got 3000000)`,
          `${f}:3:16: maxBatchDelay: must be an integer from 0 to 60000 ms (got 60001)`,
          `${f}:4:12: batchSize: must be an integer from 1 to 1024 (got 1025)`,
          `${f}:5:13: minWorkers: must be an integer from 0 to 1024 (got 2000)`,
          `${f}:6:13: maxWorkers: must be an integer from 0 to 1024 (got 100000000000000000000)`,
          `${f}:7:10: threads: must be an integer from 1 to 1024 (got 4096)`,
        ],
      });
      fs.writeFileSync(f, 'handler: h.js\nresponseTimeout: 86400\nmaxBatchDelay: 60000\nbatchSize: 1024\n');
      const r = await loadModelConfig('b', dir);
      expect(r.ok && [r.config.responseTimeoutSec, r.config.maxBatchDelayMs, r.config.batchSize]).to.deep.equal([
        86400, 60000, 1024,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should place a YAML syntax error at its line and column, and guess the key an unknown one meant', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-typo-'));
    const f = `${dir}/model-config.yaml`;
    try {
      fs.writeFileSync(f, 'handler: onnx\nmodel: m.onnx\n  batchSize: 2\n');
      expect(await loadModelConfig('t', dir)).to.deep.equal({
        ok: false,
        problems: [`${f}:3:12: bad indentation of a mapping entry`],
      });
      fs.writeFileSync(path.join(dir, 'm.onnx'), 'x');
      fs.writeFileSync(f, 'handler: onnx\nmodel: m.onnx\nbatchSise: 2\nzzz: 1\n');
      const r = await loadModelConfig('t', dir);
      expect(r.ok && r.warnings).to.deep.equal([
        `${f}:3:1: batchSise: unknown key ignored; did you mean "batchSize"?`,
        `${f}:4:1: zzz: unknown key ignored`,
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should refuse an alias bomb in model-config.yaml at the alias, before building it (the plain load built it and JSON.stringify then threw)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-bomb-'));
    const f = `${dir}/model-config.yaml`;
    try {
      const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
      for (let i = 1; i < 9; i++)
        levels.push(
          `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(96 + i)}`)
            .join(',')}]`,
        );
      fs.writeFileSync(f, `handler: onnx\nmodel: m.onnx\nhandlerOptions:\n  ${levels.join('\n  ')}\n`);
      expect(await loadModelConfig('b', dir)).to.deep.equal({
        ok: false,
        problems: [`${f}:8:31: alias "*d" brings in 11111 nodes, past the 100000 all aliases may bring in`],
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("should place a pipeline block's problems at their line and column", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-pipe-'));
    const f = `${dir}/model-config.yaml`;
    try {
      fs.writeFileSync(
        f,
        'handler: pipeline\npipeline:\n  chunkTokens: 0\n  stages:\n    - {name: thinker, model: tiny-lm}\n    - name: code2wav\n      model: tiny-vocoder\n      replicas: -1\n      color: red\n',
      );
      expect(await loadModelConfig('p', dir)).to.deep.equal({
        ok: false,
        problems: [
          `${f}:3:16: pipeline.chunkTokens: must be an integer >= 1 (got 0)`,
          `${f}:8:17: pipeline.stages[1].replicas: must be an integer >= 1 (got -1)`,
          `${f}:9:7: pipeline.stages[1].color: unknown key (known: name, model, replicas)`,
        ],
      });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should reject absolute paths, .. and symlinks leaving the root', async () => {
    expect(() => resolveInside(root, '/etc/passwd')).to.throw("path '/etc/passwd' must be relative to");
    expect(() => resolveInside(root, 'm/../../x')).to.throw("must not contain '..'");
    expect(() => resolveInside(root, 'm/link.js')).to.throw('is a symlink leading outside');
    expect(() => resolveInside(root, 'escape')).to.throw('is a symlink leading outside');
    expect(resolveInside(root, 'm/model.onnx')).to.equal(path.join(fs.realpathSync(root), 'm', 'model.onnx'));
  });

  it('should resolve a model directory, and name a missing one or a file given instead', async () => {
    const store = new ModelStore(root);
    expect(store.resolve('m/')).to.equal(path.join(fs.realpathSync(root), 'm'));
    expect(() => store.resolve('nope')).to.throw(`model directory 'nope' not found in ${store.root}`);
    expect(() => store.resolve('m/model.onnx')).to.throw(
      "'m/model.onnx' is a file; give the model directory that holds it and its model-config.yaml",
    );
    // TorchServe's url names a .mar archive: say what is served instead, naming the directory when there is one.
    expect(() => store.resolve('m.mar')).to.throw(
      `model directory 'm.mar' not found in ${store.root}: tsserve serves model directories, not .mar archives (url=m is one)`,
    );
    expect(() => store.resolve('other.mar')).to.throw(
      `model directory 'other.mar' not found in ${store.root}: tsserve serves model directories, not .mar archives`,
    );
  });

  it('should refuse a url with a scheme as a download it does not do, even where a store directory would match it (regression: "model directory \'https://…\' not found")', () => {
    const store = new ModelStore(root);
    // A directory named like a scheme's first part: the url is still a download, never this directory.
    fs.mkdirSync(path.join(root, 'file:', 'm'), { recursive: true });
    fs.writeFileSync(path.join(root, 'file:', 'm', 'model-config.yaml'), 'handler: onnx\n');
    for (const url of [
      'https://example.com/m.mar',
      'http://127.0.0.1/m',
      's3://bucket/m.mar',
      'file://m',
      'FILE:///etc',
    ]) {
      expect(() => store.resolve(url), url).to.throw(
        `url '${url}' is a URL; tsserve downloads no model: give a model directory inside the model store ${store.root}`,
      );
    }
    expect(store.resolve('file:/m')).to.equal(path.join(fs.realpathSync(root), 'file:', 'm'));
  });

  it('should list only model directories inside the store, and say which symlink it skipped and why', async () => {
    const skipped: string[] = [];
    expect(new ModelStore(root).list((name, why) => skipped.push(`${name}: ${why}`)).map((e) => e.name)).to.deep.equal([
      'm',
    ]);
    expect(skipped).to.deep.equal([`escape: path 'escape' is a symlink leading outside ${fs.realpathSync(root)}`]);
  });
});
