import { expect } from 'chai';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { resolveEngineConfig } from '../../backend/engine/config.js';
import { loadModelConfig } from '../../frontend/store/model-config.js';
import {
  ENGINE_ARG_FLAGS,
  ENGINE_ARGS,
  engineArgOfFlag,
  parseEngineArgText,
  validateEngineArgs,
} from '../../schema/engine-args.js';
import type { EngineArgDef } from '../../schema/engine-args.js';

/** A valid value of a setting that differs from its default. */
function sample(d: EngineArgDef): unknown {
  switch (d.type) {
    case 'int':
      return (d.min ?? 0) + 7;
    case 'number':
      return d.max === undefined ? 2.5 : d.max / 2;
    case 'bool':
      return false;
    case 'layout':
      return 'hf';
    case 'ids':
      return [3, 4];
    case 'speculative':
      return { method: 'ngram', numSpeculativeTokens: 3, promptLookupMax: 4, promptLookupMin: 2 };
  }
}

const MODEL = {
  vocab_size: 259,
  num_layers: 4,
  num_heads: 4,
  head_dim: 64,
  bos_token_id: 256,
  eos_token_id: 257,
  pad_token_id: 258,
};

describe('validateEngineArgs', () => {
  it('should take every setting under its snake_case, camelCase and alias spellings and return our name', async () => {
    for (const d of ENGINE_ARGS) {
      for (const key of [d.snake, d.name, ...(d.aliases ?? [])]) {
        expect(validateEngineArgs({ [key]: sample(d) }), key).to.deep.equal({
          args: { [d.name]: sample(d) },
          problems: [],
        });
      }
    }
  });

  it('should honour every vLLM snake_case key in the resolved engine config', async () => {
    const cfg = resolveEngineConfig({
      ...MODEL,
      max_position_embeddings: 512,
      max_model_len: 300,
      block_size: 8,
      num_gpu_blocks_override: 40,
      max_num_seqs: 64,
      max_num_batched_tokens: 1024,
      enable_chunked_prefill: true,
      long_prefill_token_threshold: 64,
      enable_prefix_caching: false,
      stats_interval_ms: 5,
      disable_log_stats: true,
      kv_cache_metrics_sample: 0.5,
      compute_nans_in_logits: true,
      enable_mfu_metrics: true,
      hidden_size: 320,
      intermediate_size: 1000,
      threads: 2,
      row_grow_step: 32,
      add_bos: false,
      layout: 'fast',
      suppress_tokens: [256, 258],
    });
    expect(cfg).to.deep.equal({
      model: {
        vocabSize: 259,
        numLayers: 4,
        numHeads: 4,
        headDim: 64,
        maxContext: 512,
        bosId: 256,
        eosId: 257,
        padId: 258,
      },
      layout: 'fast',
      blockSize: 8,
      numBlocks: 40,
      numRowTokens: 320,
      maxNumSeqs: 64,
      maxNumBatchedTokens: 1024,
      enableChunkedPrefill: true,
      prefillChunkSize: 64,
      enablePrefixCaching: false,
      maxModelLen: 300,
      statsIntervalMs: 5,
      disableLogStats: true,
      kvCacheMetricsSample: 0.5,
      computeNansInLogits: true,
      enableMfuMetrics: true,
      hiddenSize: 320,
      intermediateSize: 1000,
      threads: 2,
      rowGrowStep: 32,
      addBos: false,
      eosTokenIds: [257],
      suppressTokenIds: [256, 258],
      speculative: null,
    });
    expect(
      resolveEngineConfig({ ...MODEL, kv_cache_memory_bytes: 131072 * 10, eos_token_id: [257, 10] }),
    ).to.deep.include({ numBlocks: 5, numRowTokens: 80, eosTokenIds: [257, 10] });
    // vLLM's long_prefill_token_threshold 0 = no cap: a chunk is bounded by the step budget only.
    expect(
      resolveEngineConfig({ ...MODEL, enable_chunked_prefill: true, long_prefill_token_threshold: 0 }).prefillChunkSize,
    ).to.equal(512);
  });

  it('should refuse an unknown key, a bad value and a conflict, each with the key, the value and a hint', async () => {
    expect(
      validateEngineArgs({
        max_num_seq: 64,
        maxNumSeqs: 'lots',
        enable_prefix_caching: 'yes',
        layout: 'paged',
        eos_token_id: [],
        block_size: 16,
        blockSize: 32,
        zzz: 1,
      }).problems.map((p) => p.message),
    ).to.deep.equal([
      'engine.max_num_seq: unknown engine setting (value 64); did you mean "max_num_seqs"?',
      'engine.maxNumSeqs: must be an integer >= 1, got "lots"',
      'engine.enable_prefix_caching: must be true or false, got "yes"',
      'engine.layout: must be auto, fast or hf, got "paged"',
      'engine.eos_token_id: must be a token id or a non-empty list of token ids (integers >= 0), got []',
      'engine.blockSize: 32 conflicts with engine.block_size: 16 (the same setting spelled two ways)',
      `engine.zzz: unknown engine setting (value 1); known settings: ${ENGINE_ARGS.map((d) => d.snake).join(', ')}`,
    ]);
    expect(validateEngineArgs({ max_num_seqs: 8, maxNumSeqs: 8 })).to.deep.equal({
      args: { maxNumSeqs: 8 },
      problems: [],
    });
    expect(validateEngineArgs({ max_num_seqs: 1.5 }, '').problems[0]!.message).to.equal(
      'max_num_seqs: must be an integer >= 1, got 1.5',
    );
  });

  it('should throw every problem at once from resolveEngineConfig, a missing model dim included', async () => {
    expect(() =>
      resolveEngineConfig({
        ...MODEL,
        head_dim: undefined,
        max_num_seqs: 0,
        maxModelLen: 2048,
        max_position_embeddings: 1024,
        suppress_tokens: [300],
      }),
    ).to.throw(
      'invalid engine settings:\n  engine.head_dim: must be an integer >= 1, got empty (null)\n  engine.max_num_seqs: must be an integer >= 1, got 0\n' +
        "  engine.maxModelLen: 2048 exceeds the model's maxContext (max_position_embeddings) 1024\n  engine.suppress_tokens: token id 300 is outside the vocabulary (0..258)",
    );
    expect(() =>
      resolveEngineConfig({
        vocab_size: 259,
        num_layers: 1,
        num_heads: 1,
        bos_token_id: 1,
        eos_token_id: 2,
        pad_token_id: 3,
      }),
    ).to.throw("invalid engine settings:\n  engine.headDim: required (the model's own dims and special ids)");
  });

  it('should list a flag for every spelling vLLM takes and parse flag text by type', async () => {
    const flags = ENGINE_ARG_FLAGS.filter((f) => f.def.name === 'maxNumSeqs').map((f) => [f.flag, f.parseArgsType]);
    expect(flags).to.deep.equal([
      ['max_num_seqs', 'string'],
      ['max-num-seqs', 'string'],
      ['maxNumSeqs', 'string'],
    ]);
    expect(ENGINE_ARG_FLAGS.find((f) => f.flag === 'enable-prefix-caching')!.parseArgsType).to.equal('boolean');
    expect(engineArgOfFlag('max-num-batched-tokens')!.name).to.equal('maxNumBatchedTokens');
    expect(parseEngineArgText(engineArgOfFlag('eos-token-id')!, '257,10')).to.deep.equal([257, 10]);
    expect(parseEngineArgText(engineArgOfFlag('max_num_seqs')!, '64')).to.equal(64);
    expect(parseEngineArgText(engineArgOfFlag('max_num_seqs')!, 'x')).to.equal('x');
    expect(parseEngineArgText(engineArgOfFlag('add_bos')!, 'false')).to.equal(false);
  });
});

/** The model's own dims and ids, which every generate model's block gives (appended, so the lines above keep their numbers). */
const DIMS_YAML =
  '  vocab_size: 259\n  num_layers: 4\n  num_heads: 4\n  head_dim: 64\n  bos_token_id: 256\n  eos_token_id: 257\n  pad_token_id: 258\n';
const DIMS = {
  vocabSize: 259,
  numLayers: 4,
  numHeads: 4,
  headDim: 64,
  bosTokenId: 256,
  eosTokenId: 257,
  padTokenId: 258,
};

describe('model-config.yaml engine: block', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsserve-engine-args-'));
    fs.writeFileSync(path.join(dir, 'model.onnx'), 'x');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('should hand the worker the block under our names whichever spelling the file uses', async () => {
    fs.writeFileSync(
      path.join(dir, 'model-config.yaml'),
      `handler: generate\nmodel: model.onnx\nengine:\n  max_num_seqs: 64\n  enable_prefix_caching: false\n  blockSize: 8\n${DIMS_YAML}`,
    );
    const r = await loadModelConfig('m', dir);
    expect(r.ok && r.config.engine).to.deep.equal({
      maxNumSeqs: 64,
      enablePrefixCaching: false,
      blockSize: 8,
      ...DIMS,
    });
  });

  it('should stop the load with every problem at its file:line:col, key, value and did-you-mean', async () => {
    fs.writeFileSync(
      path.join(dir, 'model-config.yaml'),
      `handler: generate\nmodel: model.onnx\nbatchSize: 0\nengine:\n  max_num_seq: 64\n  block_size: sixteen\n  blockSize: 16\n  enable_prefix_caching: true\n  enablePrefixCaching: false\n${DIMS_YAML}`,
    );
    const f = path.join(dir, 'model-config.yaml');
    expect(await loadModelConfig('m', dir)).to.deep.equal({
      ok: false,
      problems: [
        `${f}:3:12: batchSize: must be an integer from 1 to 1024 (got 0)`,
        `${f}:5:3: engine.max_num_seq: unknown engine setting (value 64); did you mean "max_num_seqs"?`,
        `${f}:6:15: engine.block_size: must be an integer >= 1, got "sixteen"`,
        `${f}:9:3: engine.enablePrefixCaching: false conflicts with engine.enable_prefix_caching: true (the same setting spelled two ways)`,
      ],
    });
  });
});
