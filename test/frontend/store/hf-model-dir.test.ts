import { expect } from 'chai';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hfModelConfig, readHfBase } from '../../../frontend/store/hf-model-dir.js';
import { modelDirConfig } from '../../../frontend/store/model-dir-config.js';
import { writeHfDir } from '../../../tools/models/hf-dir.js';
import { writeMlp } from '../../../tools/models/mlp.js';

describe('Hugging Face model directories (frontend/store/hf-model-dir.ts)', function () {
  let root: string;
  let outside: string;

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'tsserve-hfdir-'));
    outside = mkdtempSync(join(tmpdir(), 'tsserve-hfdir-outside-'));
  });

  after(() => {
    rmSync(root, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  });

  /** A fresh export named `name` in the store. */
  function exportDir(name: string, opts: Parameters<typeof writeHfDir>[1] = {}): string {
    const dir = join(root, name);
    writeHfDir(dir, opts);
    return dir;
  }

  /** Rewrites one JSON file of `dir`. */
  function json(dir: string, file: string, v: unknown): void {
    writeFileSync(join(dir, file), JSON.stringify(v));
  }

  it('should take max_model_len, the EOS list, BOS handling and sampling defaults from the files, as vLLM does', async () => {
    const dir = exportDir('defaults', {
      generationConfig: {
        bos_token_id: 256,
        eos_token_id: [256, 257],
        do_sample: true,
        temperature: 0.6,
        top_p: 0.9,
        max_new_tokens: 40,
      },
    });
    const hf = await readHfBase(root, dir);
    expect(hf).to.deep.equal({
      ok: true,
      base: {
        engine: {
          layout: 'hf',
          vocabSize: 260,
          numLayers: 2,
          numHeads: 2,
          headDim: 16,
          maxModelLen: 256,
          maxContext: 256,
          bosTokenId: 256,
          eosTokenId: [256, 257],
          padTokenId: 256,
          addBos: false,
        },
        modelFile: 'onnx/model.onnx',
        samplingDefaults: { temperature: 0.6, top_p: 0.9, max_tokens: 40 },
      },
    });
    if (!hf.ok) return;
    const cfg = hfModelConfig('defaults', dir, hf.base);
    expect(cfg.ok).to.equal(true);
    if (!cfg.ok) return;
    expect([cfg.config.handler, cfg.config.modelFile, cfg.config.minWorkers, cfg.config.version]).to.deep.equal([
      'generate',
      'onnx/model.onnx',
      1,
      '1.0',
    ]);
    expect(cfg.config.samplingDefaults).to.deep.equal({ temperature: 0.6, top_p: 0.9, max_tokens: 40 });
  });

  it("should find Optimum's merged decoder and read add_bos_token from tokenizer_config.json", async () => {
    const dir = exportDir('merged', { merged: true });
    json(dir, 'tokenizer_config.json', { add_bos_token: true });
    const hf = await readHfBase(root, dir);
    expect(hf.ok && [hf.base.modelFile, hf.base.engine.addBos]).to.deep.equal(['decoder_model_merged.onnx', true]);
  });

  it('should refuse a max_position_embeddings the KV budget cannot hold, and take a model-config.yaml that lowers it', async () => {
    const dir = exportDir('long');
    const cfg = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    json(dir, 'config.json', { ...cfg, max_position_embeddings: 10_000_000 });
    expect(await modelDirConfig(root, 'long', dir)).to.deep.equal({
      ok: false,
      problems: [
        "config.json: max_position_embeddings 10000000: engine.maxModelLen: The model's max seq len (10000000) is larger than the maximum number of tokens that can be stored in KV cache (65536: numBlocks 4096 × blockSize 16). Try increasing engine.kvCacheBytes or engine.numBlocks, or decreasing engine.maxModelLen to 65536. (a model-config.yaml beside config.json may set engine.max_model_len)",
      ],
    });
    writeFileSync(join(dir, 'model-config.yaml'), 'minWorkers: 2\nengine:\n  max_model_len: 1024\n');
    const over = await modelDirConfig(root, 'long', dir);
    expect(
      over.ok && [over.config.handler, over.config.modelFile, over.config.minWorkers, over.config.engine],
    ).to.deep.equal([
      'generate',
      'onnx/model.onnx',
      2,
      {
        layout: 'hf',
        vocabSize: 260,
        numLayers: 2,
        numHeads: 2,
        headDim: 16,
        maxModelLen: 1024,
        maxContext: 10_000_000,
        bosTokenId: 256,
        eosTokenId: 256,
        padTokenId: 256,
        addBos: false,
      },
    ]);
  });

  it('should list every missing or bad config.json key at once, naming file and key', async () => {
    const dir = exportDir('bad-keys');
    json(dir, 'config.json', {
      vocab_size: 'big',
      num_attention_heads: 4,
      num_key_value_heads: 3,
      hidden_size: 64,
      eos_token_id: 256,
    });
    expect(await readHfBase(root, dir)).to.deep.equal({
      ok: false,
      problems: [
        'config.json: vocab_size: must be a positive integer (got "big")',
        'config.json: num_hidden_layers: required (a positive integer)',
        'config.json: max_position_embeddings: required (a positive integer)',
        'config.json: num_key_value_heads: 3 does not divide num_attention_heads 4',
        "config.json: num_key_value_heads: 3 K/V heads, but onnx/model.onnx's past has 2",
      ],
    });
  });

  it('should refuse an oversized config.json before reading it, and name a missing tokenizer.json too', async () => {
    const dir = exportDir('oversized');
    writeFileSync(join(dir, 'config.json'), `{"pad": "${'x'.repeat(1024 * 1024)}"}`);
    unlinkSync(join(dir, 'tokenizer.json'));
    expect(await readHfBase(root, dir)).to.deep.equal({
      ok: false,
      problems: ['config.json: 1048587 bytes, over the bound of 1048576', 'tokenizer.json: no such file'],
    });
  });

  it('should refuse a config.json that is not a regular file, or not JSON (echoing only an escaped excerpt)', async () => {
    const dir = exportDir('not-regular');
    unlinkSync(join(dir, 'config.json'));
    mkdirSync(join(dir, 'config.json'));
    const notJson = exportDir('not-json');
    writeFileSync(join(notJson, 'config.json'), `not json\n${'y'.repeat(100)}`);
    expect(await readHfBase(root, dir)).to.deep.equal({ ok: false, problems: ['config.json: not a regular file'] });
    expect(await readHfBase(root, notJson)).to.deep.equal({
      ok: false,
      problems: [`config.json: not valid JSON (it begins "not json\\n${'y'.repeat(31)}"…(69 more))`],
    });
  });

  it('should refuse a config.json that links out of the store', async () => {
    const dir = exportDir('escapes');
    writeFileSync(join(outside, 'config.json'), '{}');
    unlinkSync(join(dir, 'config.json'));
    symlinkSync(join(outside, 'config.json'), join(dir, 'config.json'));
    expect(await readHfBase(root, dir)).to.deep.equal({
      ok: false,
      problems: ['config.json: resolves outside the model store'],
    });
  });

  it('should list the inputs and outputs an ONNX file without the decoder layout lacks', async () => {
    const dir = exportDir('not-a-decoder', { onnxFile: 'model.onnx' });
    writeMlp(dir, { hidden: 4, seed: 1 });
    expect(await readHfBase(root, dir)).to.deep.equal({
      ok: false,
      problems: [
        'model.onnx: lacks inputs of a decoder export with past (2 layers): input_ids, attention_mask, past_key_values.0.key, past_key_values.0.value, past_key_values.1.key, past_key_values.1.value',
        'model.onnx: lacks outputs: logits, present.0.key, present.0.value, present.1.key, present.1.value',
      ],
    });
  });

  it('should say which ONNX files it looked for when there is none', async () => {
    const dir = exportDir('no-onnx');
    rmSync(join(dir, 'onnx'), { recursive: true });
    expect(await readHfBase(root, dir)).to.deep.equal({
      ok: false,
      problems: [
        'no ONNX export: none of model.onnx, onnx/model.onnx, decoder_model_merged.onnx, onnx/decoder_model_merged.onnx, decoder_with_past_model.onnx, onnx/decoder_with_past_model.onnx is in the directory',
      ],
    });
  });
});
