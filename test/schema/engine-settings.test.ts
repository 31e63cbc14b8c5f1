import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveEngineConfig } from '../../backend/engine/config.js';
import { loadModelConfig } from '../../frontend/store/model-config.js';
import { validateEngineArgs } from '../../schema/engine-args.js';
import { checkEngineSettings, writtenNames } from '../../schema/engine-settings.js';

/** The tiny LM's own dims and ids (8 KiB of K/V per position). */
const MODEL = { vocab_size: 259, num_layers: 4, num_heads: 4, head_dim: 64, bos_token_id: 256, eos_token_id: 257, pad_token_id: 258 };
const MODEL_YAML = '  vocab_size: 259\n  num_layers: 4\n  num_heads: 4\n  head_dim: 64\n  bos_token_id: 256\n  eos_token_id: 257\n  pad_token_id: 258\n';
const SPEC = { method: 'ngram', num_speculative_tokens: 3 };

function between(block: Record<string, unknown>): string[] {
  return checkEngineSettings(validateEngineArgs(block).args, writtenNames(block)).map((p) => p.message);
}

describe('checkEngineSettings', () => {
  it('should refuse speculative decoding on the hf layout, naming both keys as written', () => {
    expect(between({ ...MODEL, layout: 'hf', speculative_config: SPEC })).to.deep.equal([
      'engine.speculative_config: n-gram speculative decoding needs logits for several positions, which the hf layout (engine.layout) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)',
    ]);
    // fast and auto depend on the graph's num_logits input: the engine checks it at load.
    expect(between({ ...MODEL, layout: 'fast', speculativeConfig: SPEC })).to.deep.equal([]);
    expect(between({ ...MODEL, speculativeConfig: SPEC })).to.deep.equal([]);
  });

  it('should name a missing dim once, and not a dim given with a bad value', () => {
    const { num_heads: _, ...noHeads } = MODEL;
    expect(between({ ...noHeads, head_dim: 'wide' })).to.deep.equal(["engine.numHeads: required (the model's own dims and special ids)"]);
  });

  it('should refuse a budget that leaves no working rows', () => {
    expect(between({ ...MODEL, kv_cache_memory_bytes: 131072 * 10, num_gpu_blocks_override: 10 })).to.deep.equal([
      'engine.kv_cache_memory_bytes: 1310720 bytes leave no room for working rows after 10 blocks of 16 tokens; raise kvCacheBytes or lower numBlocks',
    ]);
  });

  it('should give the engine the same problems, with the keys as written', () => {
    expect(() => resolveEngineConfig({ ...MODEL, layout: 'hf' }, { speculative_config: SPEC })).to.throw(
      'invalid engine settings:\n  engine.speculative_config: n-gram speculative decoding needs logits for several positions, which the hf layout (engine.layout) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)',
    );
  });
});

describe('model-config.yaml engine: rules between settings', () => {
  let dir: string;
  let f: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-engine-settings-'));
    fs.writeFileSync(path.join(dir, 'model.onnx'), 'x');
    f = path.join(dir, 'model-config.yaml');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should stop speculative decoding on the hf layout at the config check (the worker refused it at every load, retried forever)', () => {
    fs.writeFileSync(f, `handler: generate\nmodel: model.onnx\nengine:\n  layout: hf\n${MODEL_YAML}  speculative_config:\n    method: ngram\n    num_speculative_tokens: 3\n`);
    expect(loadModelConfig('m', dir)).to.deep.equal({ ok: false, problems: [
      `${f}:13:5: engine.speculative_config: n-gram speculative decoding needs logits for several positions, which the hf layout (engine.layout) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)`,
    ] });
  });

  it('should stop a generate model without its dims, at the engine: key or the file', () => {
    fs.writeFileSync(f, 'handler: generate\nmodel: model.onnx\nengine:\n  vocab_size: 259\n  max_num_seqs: 4\n');
    expect(loadModelConfig('m', dir)).to.deep.equal({ ok: false, problems: [
      "numLayers", "numHeads", "headDim", "bosTokenId", "eosTokenId", "padTokenId",
    ].map((k) => `${f}:3:1: engine.${k}: required (the model's own dims and special ids)`) });
    fs.writeFileSync(f, 'handler: generate\nmodel: model.onnx\n');
    expect(loadModelConfig('m', dir)).to.deep.equal({ ok: false, problems: [
      "vocabSize", "numLayers", "numHeads", "headDim", "bosTokenId", "eosTokenId", "padTokenId",
    ].map((k) => `${f}: engine.${k}: required (the model's own dims and special ids)`) });
  });

  it('should leave an engine block of another handler to its own keys', () => {
    fs.writeFileSync(f, 'handler: onnx\nmodel: model.onnx\nengine:\n  max_num_seqs: 4\n');
    const r = loadModelConfig('m', dir);
    expect(r.ok && r.config.engine).to.deep.equal({ maxNumSeqs: 4 });
  });
});
