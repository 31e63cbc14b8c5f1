import { expect } from 'chai';
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { load } from 'js-yaml';
import { generateNewStore, generateStore } from '../../../tools/models/store.js';
import type { StoreModel } from '../../../tools/models/store-model.js';
import { MLP_HEAVY_MODEL } from '../../../tools/models/demo-models.js';
import { STORE_MODELS } from '../../../tools/models/store-models.js';

const BIN = join(import.meta.dirname, '..', '..', '..', '..', 'bin', 'tsserve.js');

function hashTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(root, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(root);
  return out;
}

describe('tools/models/store', function () {
  let tmp: string;

  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'tsserve-store-'));
  });

  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('should write byte-identical stores when `tsserve models generate` runs twice', async () => {
    const run = promisify(execFile);
    const a = await run(process.execPath, [BIN, 'models', 'generate', join(tmp, 'a')]);
    await run(process.execPath, [BIN, 'models', 'generate', join(tmp, 'b')]);
    expect(a.stdout.split('\n').slice(-2)[0]).to.equal(
      `model store ${join(tmp, 'a')}: ${STORE_MODELS.length} written, 0 kept`,
    );
    const ha = hashTree(join(tmp, 'a'));
    // Other helpers append models (e.g. custom); these are the built-in ones.
    expect(Object.keys(ha).filter((f) => /^(mlp|tiny-lm|tiny-lm-hf)\//.test(f))).to.deep.equal([
      'mlp/model-config.yaml',
      'mlp/model.onnx',
      'tiny-lm/chat_template.jinja',
      'tiny-lm/model-config.yaml',
      'tiny-lm/model.onnx',
      'tiny-lm-hf/config.json',
      'tiny-lm-hf/generation_config.json',
      'tiny-lm-hf/model-config.yaml',
      'tiny-lm-hf/model.onnx',
      'tiny-lm-hf/special_tokens_map.json',
      'tiny-lm-hf/tokenizer.json',
      'tiny-lm-hf/tokenizer_config.json',
    ]);
    expect(hashTree(join(tmp, 'b'))).to.deep.equal(ha);
  });

  it('should write the model-config keys the frontend reads, with the engine block for generate', () => {
    const mlp = load(readFileSync(join(tmp, 'a', 'mlp', 'model-config.yaml'), 'utf8'));
    expect(mlp).to.deep.equal({
      handler: 'onnx',
      model: 'model.onnx',
      batchSize: 8,
      maxBatchDelay: 5,
      minWorkers: 1,
      maxWorkers: 4,
      responseTimeout: 30,
      threads: 1,
    });
    const hf = load(readFileSync(join(tmp, 'a', 'tiny-lm-hf', 'model-config.yaml'), 'utf8')) as {
      engine: Record<string, unknown>;
      handler: string;
    };
    expect(hf.handler).to.equal('generate');
    expect(hf.engine).to.deep.equal({
      layout: 'hf',
      vocabSize: 50257,
      numLayers: 2,
      numHeads: 2,
      headDim: 32,
      bosTokenId: 50256,
      eosTokenId: 50256,
      padTokenId: 50256,
      addBos: false,
      maxModelLen: 1024,
      maxContext: 1024,
      blockSize: 16,
      numBlocks: 512,
      maxNumSeqs: 32,
      maxNumBatchedTokens: 512,
      enablePrefixCaching: true,
    });
  });

  it('should keep existing model directories unless forced', async () => {
    const dir = join(tmp, 'c');
    let calls = 0;
    const m: StoreModel = {
      name: 'm',
      summary: 's',
      write: (d) => {
        calls++;
        writeFileSync(join(d, 'x'), String(calls));
      },
    };
    const lines: string[] = [];
    expect(await generateStore(dir, { models: [m] })).to.deep.equal({ written: ['m'], skipped: [], refused: [] });
    expect(await generateStore(dir, { models: [m], log: (l) => lines.push(l) })).to.deep.equal({
      written: [],
      skipped: ['m'],
      refused: [],
    });
    expect(lines).to.deep.equal(['m: exists, kept (use --force to rewrite)']);
    expect(readFileSync(join(dir, 'm', 'x'), 'utf8')).to.equal('1');
    expect(await generateStore(dir, { models: [m], force: true })).to.deep.equal({
      written: ['m'],
      skipped: [],
      refused: [],
    });
    expect(readFileSync(join(dir, 'm', 'x'), 'utf8')).to.equal('2');
    expect(readdirSync(dir)).to.deep.equal(['m']);
  });

  it("should keep, under --force, a model directory holding files it does not write, naming them, and exit 1 (it removed a user's notes.txt with the model)", async () => {
    const dir = join(tmp, 'user');
    const run = promisify(execFile);
    await run(process.execPath, [BIN, 'models', 'generate', dir, '--only', 'mlp,tiny-vocoder']);
    writeFileSync(join(dir, 'mlp', 'notes.txt'), 'mine');
    mkdirSync(join(dir, 'my-model'));
    writeFileSync(join(dir, 'my-model', 'model-config.yaml'), 'handler: onnx\n');
    const err = await run(process.execPath, [
      BIN,
      'models',
      'generate',
      dir,
      '--only',
      'mlp,tiny-vocoder',
      '--force',
    ]).catch((e: { code: number; stdout: string }) => e);
    const out = (err as { stdout: string }).stdout.split('\n').map((l) => l.replace(/ in \d+ ms/, ' in N ms'));
    expect([(err as { code: number }).code, out]).to.deep.equal([
      1,
      [
        `mlp: holds notes.txt, which this tool does not write; kept (move them out, or remove ${join(dir, 'mlp')}, to rewrite it)`,
        'tiny-vocoder: written in N ms — codec tokens -> 24000 Hz PCM16, 960 frames per token (handler vocoder)',
        `model store ${dir}: 1 written, 0 kept, 1 not rewritten (mlp: files of yours)`,
        '',
      ],
    ]);
    expect([
      readdirSync(dir).sort(),
      readdirSync(join(dir, 'mlp')).sort(),
      readFileSync(join(dir, 'my-model', 'model-config.yaml'), 'utf8'),
    ]).to.deep.equal([
      ['mlp', 'my-model', 'tiny-vocoder'],
      ['model-config.yaml', 'model.onnx', 'notes.txt'],
      'handler: onnx\n',
    ]);
  });

  it("should keep a model directory that appeared while it wrote that model (a second run at once removed the first one's and put its own)", async () => {
    const dir = join(tmp, 'race');
    const m: StoreModel = {
      name: 'm',
      summary: 's',
      write: (d) => {
        writeFileSync(join(d, 'x'), 'this run');
        mkdirSync(join(dir, 'm'));
        writeFileSync(join(dir, 'm', 'x'), 'the other run');
      },
    };
    const lines: string[] = [];
    expect(await generateStore(dir, { models: [m], log: (l) => lines.push(l) })).to.deep.equal({
      written: [],
      skipped: ['m'],
      refused: [],
    });
    expect([lines, readdirSync(dir), readFileSync(join(dir, 'm', 'x'), 'utf8')]).to.deep.equal([
      ['m: appeared meanwhile (another run?), kept'],
      ['m'],
      'the other run',
    ]);
  });

  it('should remove the temporary model directories of a run stopped mid-write, and only those (a Ctrl-C left .NAME.tmp-PID in the store for good)', async () => {
    const dir = join(tmp, 'abandoned');
    const m: StoreModel = { name: 'm', summary: 's', write: (d) => writeFileSync(join(d, 'x'), '1') };
    const gone = spawnSync(process.execPath, ['-e', '']).pid!;
    const left = [`.m.tmp-${gone}`, `.m.tmp-${gone}.old`];
    const kept = [`.m.tmp-${process.ppid}`, `.other.tmp-${gone}`, `.m.tmp-0x${gone.toString(16)}`, 'my-model'];
    for (const d of [...left, ...kept]) mkdirSync(join(dir, d), { recursive: true });
    await generateStore(dir, { models: [m] });
    expect(readdirSync(dir).sort()).to.deep.equal(['m', ...kept].sort());
  });

  it('should refuse a DIR that is a file with one line and exit 2 (it failed with a bare ENOTDIR from scandir)', () => {
    const file = join(tmp, 'a-file');
    writeFileSync(file, '');
    const r = spawnSync(process.execPath, [BIN, 'models', 'generate', file], { encoding: 'utf8' });
    expect([r.status, r.stdout, r.stderr]).to.deep.equal([
      2,
      '',
      `tsserve models generate: ${file} exists and is not a directory\n`,
    ]);
  });

  it('should leave no model directory behind when a writer throws', async () => {
    const dir = join(tmp, 'd');
    const bad: StoreModel = {
      name: 'bad',
      summary: 's',
      write: () => {
        throw new Error('boom');
      },
    };
    let msg = '';
    await generateStore(dir, { models: [bad] }).catch((e: Error) => {
      msg = e.message;
    });
    expect(msg).to.equal('boom');
    expect(readdirSync(dir)).to.deep.equal([]);
  });

  it('should reject unknown names in --only with the known ones listed, as a bad flag (exit 2, it was 1), writing nothing', async () => {
    const run = promisify(execFile);
    const err = await run(process.execPath, [BIN, 'models', 'generate', join(tmp, 'e'), '--only', 'mlp,nope']).catch(
      (e: { code: number; stderr: string }) => e,
    );
    expect((err as { code: number }).code).to.equal(2);
    expect((err as { stderr: string }).stderr).to.equal(
      `tsserve models generate: --only: unknown model(s): nope (known: ${STORE_MODELS.map((m) => m.name).join(', ')})\n`,
    );
    expect(existsSync(join(tmp, 'e'))).to.equal(false);
  });

  it("should write the tiny LM's position table size, so generate --max-model-len past it is refused at load (it ran, and failed in the model's Gather)", async () => {
    const run = promisify(execFile);
    const input = join(tmp, 'p.jsonl');
    writeFileSync(input, '{"prompt":"hi","max_tokens":1}\n');
    const err = await run(process.execPath, [
      BIN,
      'generate',
      '--model',
      join(tmp, 'a', 'tiny-lm'),
      '--input',
      input,
      '--max-model-len',
      '2000',
    ]).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect(err).to.deep.include({
      code: 1,
      stdout: '',
      stderr: `tsserve generate: cannot load ${join(tmp, 'a', 'tiny-lm')}: invalid engine settings:\n  engine.max_model_len: 2000 exceeds the model's maxContext (max_position_embeddings) 1024\n`,
    });
  });

  it('should write mlp-heavy with batchSize 32 for the serving bench', async () => {
    const dir = join(tmp, 'f');
    await generateStore(dir, { models: [MLP_HEAVY_MODEL] });
    const cfg = load(readFileSync(join(dir, 'mlp-heavy', 'model-config.yaml'), 'utf8'));
    expect(cfg).to.deep.equal({
      handler: 'onnx',
      model: 'model.onnx',
      batchSize: 32,
      maxBatchDelay: 5,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeout: 60,
      threads: 1,
    });
  });
});

describe('generateNewStore', () => {
  const models = (failAt: string | null): StoreModel[] =>
    ['a', 'b', 'c'].map((name) => ({
      name,
      summary: name,
      write: (dir: string): void => {
        if (name === failAt) throw new Error(`${name}: interrupted`);
        writeFileSync(join(dir, 'model-config.yaml'), `handler: onnx # ${name}\n`);
      },
    }));

  it('should leave no store at all when a model fails midway, so the next start generates it whole (a stopped first run left a store of the first models)', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'tsserve-newstore-'));
    try {
      const dir = join(parent, 'model-store');
      let failure = '';
      await generateNewStore(dir, { models: models('c') }).catch((e: Error) => {
        failure = e.message;
      });
      expect([failure, readdirSync(parent)]).to.deep.equal(['c: interrupted', []]);
      // What a first run stopped with Ctrl-C leaves (its process gone), and one still generating.
      const gone = spawnSync(process.execPath, ['-e', '']).pid!;
      mkdirSync(join(parent, `model-store.tmp-${gone}`));
      mkdirSync(join(parent, `model-store.tmp-${gone}-2`)); // the second run of that process
      mkdirSync(join(parent, `model-store.tmp-${process.ppid}`));
      // Names this module never writes are not its to remove, even when Number() reads a dead pid in them.
      const foreign = [
        `model-store.tmp-+${gone}`,
        `model-store.tmp-0x${gone.toString(16)}`,
        'model-store.tmp-old',
        `model-store.tmp-${gone}-x`,
      ].sort();
      for (const f of foreign) mkdirSync(join(parent, f));
      const r = await generateNewStore(dir, { models: models(null) });
      expect(readdirSync(parent).sort()).to.deep.equal(
        ['model-store', ...foreign, `model-store.tmp-${process.ppid}`].sort(),
      );
      for (const f of [...foreign, `model-store.tmp-${process.ppid}`]) rmSync(join(parent, f), { recursive: true });
      expect([r.written, readdirSync(parent), readdirSync(dir)]).to.deep.equal([
        ['a', 'b', 'c'],
        ['model-store'],
        ['a', 'b', 'c'],
      ]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('should let the second of two runs at once use the store the first renamed into place (regression: its rename failed with ENOTEMPTY and start exited 1)', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'tsserve-newstore-'));
    try {
      const dir = join(parent, 'model-store');
      // Both runs reach their last model before either renames.
      let entered = 0;
      let open: () => void = () => undefined;
      const bothIn = new Promise<void>((resolve) => {
        open = resolve;
      });
      const racing: StoreModel[] = models(null).map((m) =>
        m.name !== 'c'
          ? m
          : {
              ...m,
              write: async (d: string): Promise<void> => {
                if (++entered === 2) open();
                await bothIn;
                await m.write(d);
              },
            },
      );
      const lines: string[] = [];
      const results = await Promise.all(
        [0, 1].map(() =>
          generateNewStore(dir, {
            models: racing,
            log: (l) => {
              if (!l.includes(' written in ')) lines.push(l);
            },
          }),
        ),
      );
      expect(results.map((r) => [r.written, r.skipped]).sort()).to.deep.equal([
        [[], ['a', 'b', 'c']],
        [['a', 'b', 'c'], []],
      ]);
      expect(lines).to.deep.equal([`${dir} was generated meanwhile by another run (another tsserve start?); using it`]);
      expect([readdirSync(parent), readdirSync(dir)]).to.deep.equal([['model-store'], ['a', 'b', 'c']]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it("should refuse, naming what it lacks, a directory that appeared at the store's place without every model, and leave it as it is", async () => {
    const parent = mkdtempSync(join(tmpdir(), 'tsserve-newstore-'));
    try {
      const dir = join(parent, 'model-store');
      // Made while this run writes its last model: not a store this tool renamed into place.
      const intruded: StoreModel[] = models(null).map((m) =>
        m.name !== 'c'
          ? m
          : {
              ...m,
              write: (d: string): void => {
                mkdirSync(join(dir, 'a'), { recursive: true });
                void m.write(d);
              },
            },
      );
      let failure = '';
      await generateNewStore(dir, { models: intruded }).catch((e: Error) => {
        failure = e.message;
      });
      expect(failure).to.equal(
        `${dir} appeared while this run generated it, without b, c; it is not a store this tool wrote: remove it, or generate into it with tsserve models generate ${dir}`,
      );
      expect([readdirSync(parent), readdirSync(dir)]).to.deep.equal([['model-store'], ['a']]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
