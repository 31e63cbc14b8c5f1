import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveEngineConfig } from '../../backend/engine/config.js';
import { loadModelConfig } from '../../frontend/store/model-config.js';
import { validateEngineArgs } from '../../schema/engine-args.js';
import { checkEngineSettings, checkKvHoldsMaxModelLen, writtenNames } from '../../schema/engine-settings.js';

/** The tiny LM's own dims and ids (8 KiB of K/V per position). */
const MODEL = {
  vocab_size: 259,
  num_layers: 4,
  num_heads: 4,
  head_dim: 64,
  bos_token_id: 256,
  eos_token_id: 257,
  pad_token_id: 258,
};
const MODEL_YAML =
  '  vocab_size: 259\n  num_layers: 4\n  num_heads: 4\n  head_dim: 64\n  bos_token_id: 256\n  eos_token_id: 257\n  pad_token_id: 258\n';
const SPEC = { method: 'ngram', num_speculative_tokens: 3 };

function between(block: Record<string, unknown>): string[] {
  return checkEngineSettings(validateEngineArgs(block).args, writtenNames(block)).map((p) => p.message);
}

function kv(block: Record<string, unknown>): string | undefined {
  return checkKvHoldsMaxModelLen(validateEngineArgs(block).args, writtenNames(block))?.message;
}

describe('checkEngineSettings', () => {
  it('should refuse speculative decoding on the hf layout, naming both keys as written', async () => {
    expect(between({ ...MODEL, layout: 'hf', speculative_config: SPEC })).to.deep.equal([
      'engine.speculative_config: n-gram speculative decoding needs logits for several positions, which the hf layout (engine.layout) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)',
    ]);
    // fast and auto depend on the graph's num_logits input: the engine checks it at load.
    expect(between({ ...MODEL, layout: 'fast', speculativeConfig: SPEC })).to.deep.equal([]);
    expect(between({ ...MODEL, speculativeConfig: SPEC })).to.deep.equal([]);
  });

  it('should name a missing dim once, and not a dim given with a bad value', async () => {
    const { num_heads: _, ...noHeads } = MODEL;
    expect(between({ ...noHeads, head_dim: 'wide' })).to.deep.equal([
      "engine.numHeads: required (the model's own dims and special ids)",
    ]);
  });

  it('should refuse a budget that leaves no working rows', async () => {
    expect(between({ ...MODEL, kv_cache_memory_bytes: 131072 * 10, num_gpu_blocks_override: 10 })).to.deep.equal([
      'engine.kv_cache_memory_bytes: 1310720 bytes leave no room for working rows after 10 blocks of 16 tokens; raise kvCacheBytes or lower numBlocks',
    ]);
  });

  it('should refuse a step budget under max_model_len without chunked prefill, as vLLM does (the engine raised it silently)', async () => {
    expect(
      between({ ...MODEL, max_model_len: 1024, enable_chunked_prefill: false, max_num_batched_tokens: 512 }),
    ).to.deep.equal([
      'engine.max_num_batched_tokens: max_num_batched_tokens (512) is smaller than max_model_len (1024). This effectively limits the maximum sequence length to max_num_batched_tokens and makes the engine reject longer sequences. Please increase engine.max_num_batched_tokens or decrease engine.max_model_len, or enable chunked prefill',
    ]);
    // Chunked (the default), equal, or left to its default (max(2048, max_model_len)): fine.
    expect(between({ ...MODEL, max_model_len: 1024, max_num_batched_tokens: 512 })).to.deep.equal([]);
    expect(
      between({ ...MODEL, max_model_len: 1024, enable_chunked_prefill: false, max_num_batched_tokens: 1024 }),
    ).to.deep.equal([]);
    expect(
      resolveEngineConfig({ ...MODEL, max_model_len: 1024 }, { enableChunkedPrefill: false }).maxNumBatchedTokens,
    ).to.equal(2048);
  });

  it('should give the engine the same problems, with the keys as written', async () => {
    expect(() => resolveEngineConfig({ ...MODEL, layout: 'hf' }, { speculative_config: SPEC })).to.throw(
      'invalid engine settings:\n  engine.speculative_config: n-gram speculative decoding needs logits for several positions, which the hf layout (engine.layout) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)',
    );
  });
});

describe('checkKvHoldsMaxModelLen', () => {
  it("should refuse a block pool smaller than max_model_len with vLLM's message and our knobs", async () => {
    expect(kv({ ...MODEL, max_model_len: 1024, num_gpu_blocks_override: 8 })).to.equal(
      "engine.max_model_len: The model's max seq len (1024) is larger than the maximum number of tokens that can be stored in KV cache (128: numBlocks 8 × blockSize 16). Try increasing engine.kvCacheBytes or engine.numBlocks, or decreasing engine.maxModelLen to 128.",
    );
  });

  it('should refuse working rows that cannot hold max_model_len, and name maxContext when it sets the length', async () => {
    // 200 positions of budget: 6 blocks of 16 (96) in the store, 104 row positions, rows of 16 × 2^k (64 fits, 128 not).
    expect(kv({ ...MODEL, max_position_embeddings: 256, kvCacheBytes: 200 * 8192, row_grow_step: 16 })).to.equal(
      "engine.max_position_embeddings: The model's max seq len (256) is larger than the maximum number of tokens that can be stored in KV cache (64: the working rows' 104 positions, in rows of 16 × 2^k). Try increasing engine.kvCacheBytes or engine.numBlocks, or decreasing engine.maxModelLen to 64.",
    );
  });

  it("should pass a pool that holds max_model_len, and the demo's and the default budgets", async () => {
    expect(kv({ ...MODEL, max_model_len: 128, num_gpu_blocks_override: 8 })).to.equal(undefined);
    expect(kv({ ...MODEL, maxModelLen: 1024, blockSize: 16, numBlocks: 512 })).to.equal(undefined);
    expect(kv({ ...MODEL, maxModelLen: 1024 })).to.equal(undefined);
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

  it('should stop speculative decoding on the hf layout at the config check (the worker refused it at every load, retried forever)', async () => {
    fs.writeFileSync(
      f,
      `handler: generate\nmodel: model.onnx\nengine:\n  layout: hf\n${MODEL_YAML}  speculative_config:\n    method: ngram\n    num_speculative_tokens: 3\n`,
    );
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:13:5: engine.speculative_config: n-gram speculative decoding needs logits for several positions, which the hf layout (engine.layout) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)`,
      ],
    });
  });

  it('should stop a pool that cannot hold max_model_len at its key, and a generate model without dims', async () => {
    fs.writeFileSync(
      f,
      `handler: generate\nmodel: model.onnx\nengine:\n${MODEL_YAML}  max_model_len: 1024\n  num_gpu_blocks_override: 8\n`,
    );
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:11:18: engine.max_model_len: The model's max seq len (1024) is larger than the maximum number of tokens that can be stored in KV cache (128: numBlocks 8 × blockSize 16). Try increasing engine.kvCacheBytes or engine.numBlocks, or decreasing engine.maxModelLen to 128.`,
      ],
    });
    fs.writeFileSync(f, 'handler: generate\nmodel: model.onnx\nengine:\n  vocab_size: 259\n  max_num_seqs: 4\n');
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: ['numLayers', 'numHeads', 'headDim', 'bosTokenId', 'eosTokenId', 'padTokenId'].map(
        (k) => `${f}:3:1: engine.${k}: required (the model's own dims and special ids)`,
      ),
    });
    fs.writeFileSync(f, 'handler: generate\nmodel: model.onnx\n');
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: ['vocabSize', 'numLayers', 'numHeads', 'headDim', 'bosTokenId', 'eosTokenId', 'padTokenId'].map(
        (k) => `${f}: engine.${k}: required (the model's own dims and special ids)`,
      ),
    });
  });

  it('should leave an engine block of another handler to its own keys', async () => {
    fs.writeFileSync(f, 'handler: onnx\nmodel: model.onnx\nengine:\n  max_num_seqs: 4\n');
    const r = await loadModelConfig('m', dir);
    expect(r.ok && r.config.engine).to.deep.equal({ maxNumSeqs: 4 });
  });
});
