/**
 * The built-in models of the demo store and `mlp-heavy` (bench only): model files plus their
 * model-config.yaml. Values here are the defaults a user sees after `tsserve models generate`.
 */
import { MLP_HEAVY_HIDDEN, MLP_HEAVY_REPEAT, MLP_HEAVY_SEED, MLP_HIDDEN, MLP_SEED, writeMlp } from './mlp.js';
import { writeModelConfig } from './model-config.js';
import type { StoreModel } from './store-model.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeTinyLm } from './tiny-lm.js';
import { tinyLmEngineSpec } from './tiny-lm-spec.js';
import type { TinyLmLayout } from './tiny-lm-spec.js';
import { TINY_EMBED_HIDDEN, TINY_EMBED_MAX_LEN, TINY_EMBED_SEED, writeTinyEmbed } from './tiny-embed.js';
import { FRAMES_PER_TOKEN, VOCODER_SAMPLE_RATE, VOCODER_VOCAB, writeTinyVocoder } from './tiny-vocoder.js';

/** `mlp`: the dynamic-batching demo classifier (784 → 1024 → 1024 → 10). */
export const MLP_MODEL: StoreModel = {
  name: 'mlp',
  summary: `MLP classifier 784-${MLP_HIDDEN}-${MLP_HIDDEN}-10 (handler onnx)`,
  write(dir) {
    writeMlp(dir, { hidden: MLP_HIDDEN, seed: MLP_SEED });
    writeModelConfig(
      dir,
      {
        handler: 'onnx',
        model: 'model.onnx',
        batchSize: 8,
        maxBatchDelay: 5,
        minWorkers: 1,
        maxWorkers: 4,
        responseTimeout: 30,
        threads: 1,
      },
      `mlp: input float32 [batch, 784] -> probabilities [batch, 10]. Random weights (seed ${MLP_SEED}).\nRequest body: a JSON array of 784 numbers; answer: 10 probabilities.`,
    );
  },
};

/** Writes `dir/` for the bench's compute-bound MLP (a batch of 32 costs ≥ 20 ms on 1 thread). */
export function writeMlpHeavy(
  dir: string,
  cfg: { readonly batchSize?: number; readonly maxBatchDelay?: number } = {},
): void {
  writeMlp(dir, { hidden: MLP_HEAVY_HIDDEN, seed: MLP_HEAVY_SEED, repeat: MLP_HEAVY_REPEAT });
  writeModelConfig(
    dir,
    {
      handler: 'onnx',
      model: 'model.onnx',
      batchSize: cfg.batchSize ?? 32,
      maxBatchDelay: cfg.maxBatchDelay ?? 5,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeout: 60,
      threads: 1,
    },
    `mlp-heavy: same interface as mlp, hidden ${MLP_HEAVY_HIDDEN} applied ${MLP_HEAVY_REPEAT}x (shared weights), for bench:serve.`,
  );
}

/** `mlp-heavy`: not in the default store; bench:serve writes it into a temp store. */
export const MLP_HEAVY_MODEL: StoreModel = {
  name: 'mlp-heavy',
  summary: `compute-bound MLP (hidden ${MLP_HEAVY_HIDDEN} x${MLP_HEAVY_REPEAT}) for bench:serve`,
  write: (dir) => writeMlpHeavy(dir),
};

/** Engine settings written for the tiny LM (the engine validates and defaults the rest). */
export function tinyLmEngineConfig(layout: TinyLmLayout): Readonly<Record<string, unknown>> {
  return {
    ...tinyLmEngineSpec(layout),
    blockSize: 16,
    numBlocks: 512, // 512 × 16 tokens × 128 KiB/block = 64 MiB of block store; given alone, the working rows get as many positions (128 MiB of K/V in all)
    maxNumSeqs: 32,
    maxNumBatchedTokens: 512,
    enablePrefixCaching: true,
  };
}

/**
 * The byte-level tiny LM's chat template (`chat_template.jinja`): each message as
 * `<role>: <content>` and a newline, then `assistant:` cues its turn. The model was never trained
 * on a format, so the simplest unambiguous one is written; tiny-omni's thinker reads it too.
 */
export const BYTE_CHAT_TEMPLATE =
  "{% for message in messages %}{{ message['role'] + ': ' + message['content'] + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ 'assistant:' }}{% endif %}";

function tinyLm(name: string, layout: TinyLmLayout, what: string): StoreModel {
  return {
    name,
    summary: `tiny byte-level decoder LM, ${what} (handler generate)`,
    write(dir) {
      writeTinyLm(dir, { layout });
      writeFileSync(join(dir, 'chat_template.jinja'), BYTE_CHAT_TEMPLATE);
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
          engine: tinyLmEngineConfig(layout),
        },
        `${name}: tiny decoder-only LM, random weights (its text means nothing). ${what}.\nTokens: 0-255 = UTF-8 bytes, then BOS, EOS, PAD. Layout contract: docs/models.md.`,
      );
    },
  };
}

/** `tiny-lm`: the fast KV layout the engine is built for. */
export const TINY_LM_MODEL: StoreModel = tinyLm('tiny-lm', 'fast', 'fast KV layout');
/** The byte-level tiny LM's weights in the usual exported layout (the engine tests compare it with `tiny-lm`). */
export const TINY_LM_BYTE_HF_MODEL: StoreModel = tinyLm(
  'tiny-lm-hf',
  'hf',
  'usual exported layout (past_key_values/present)',
);

/** `tiny-lm-hf` of the demo store: GPT-2's vocabulary (tiny-lm-gpt2.ts). */
export { TINY_LM_HF_MODEL } from './tiny-lm-gpt2.js';

/** `tiny-vocoder`: codec tokens → 24 kHz PCM16 (a pipeline's code2wav stage, handler vocoder). */
export const TINY_VOCODER_MODEL: StoreModel = {
  name: 'tiny-vocoder',
  summary: `codec tokens -> ${VOCODER_SAMPLE_RATE} Hz PCM16, ${FRAMES_PER_TOKEN} frames per token (handler vocoder)`,
  write(dir) {
    writeTinyVocoder(dir);
    writeModelConfig(
      dir,
      {
        handler: 'vocoder',
        model: 'model.onnx',
        batchSize: 1,
        maxBatchDelay: 0,
        minWorkers: 1,
        maxWorkers: 1,
        responseTimeout: 60,
        threads: 1,
        handlerOptions: { sampleRate: VOCODER_SAMPLE_RATE, framesPerToken: FRAMES_PER_TOKEN, vocabSize: VOCODER_VOCAB },
      },
      `tiny-vocoder: codes int64 [N] -> pcm int16 [N, ${FRAMES_PER_TOKEN}] at ${VOCODER_SAMPLE_RATE} Hz; a pitch and an envelope per token.\nServed as a stage of a pipeline (see tiny-omni and docs/pipelines.md).`,
    );
  },
};

/** The stages of `tiny-omni`, as its model-config.yaml declares them. */
export const TINY_OMNI_PIPELINE = {
  chunkTokens: 4,
  stages: [
    { name: 'thinker', model: 'tiny-lm', replicas: 1 },
    { name: 'code2wav', model: 'tiny-vocoder', replicas: 1 },
  ],
} as const;

/** `tiny-omni`: tiny-lm as the thinker, tiny-vocoder as code2wav (handler pipeline; a config only). */
export const TINY_OMNI_MODEL: StoreModel = {
  name: 'tiny-omni',
  summary: 'spoken pipeline: tiny-lm thinker -> tiny-vocoder code2wav (handler pipeline)',
  write(dir) {
    writeModelConfig(
      dir,
      {
        handler: 'pipeline',
        model: '',
        batchSize: 1,
        maxBatchDelay: 0,
        minWorkers: 1,
        maxWorkers: 1,
        responseTimeout: 120,
        threads: 1,
        pipeline: TINY_OMNI_PIPELINE,
      },
      'tiny-omni: a two-stage pipeline over models of the same store (tiny-lm, tiny-vocoder must be there too).\nOpenAI audio output on /v1/chat/completions and POST /v1/audio/speech; see docs/pipelines.md.',
    );
  },
};

/** `tiny-embed`: a BERT-style encoder with a WordPiece tokenizer, served on /v1/embeddings (handler embedding). */
export const TINY_EMBED_MODEL: StoreModel = {
  name: 'tiny-embed',
  summary: `BERT-style encoder, hidden ${TINY_EMBED_HIDDEN}, mean pooling, on /v1/embeddings (handler embedding)`,
  write(dir) {
    writeTinyEmbed(dir);
    writeModelConfig(
      dir,
      {
        handler: 'embedding',
        model: 'model.onnx',
        batchSize: 8,
        maxBatchDelay: 5,
        minWorkers: 1,
        maxWorkers: 1,
        responseTimeout: 30,
        threads: 1,
        handlerOptions: { pooling: 'mean', normalize: true, maxModelLen: TINY_EMBED_MAX_LEN },
      },
      `tiny-embed: input_ids/attention_mask/token_type_ids int64 [batch, tokens] -> last_hidden_state [batch, tokens, ${TINY_EMBED_HIDDEN}].\nRandom weights (seed ${TINY_EMBED_SEED}); a lowercase WordPiece tokenizer.json. POST /v1/embeddings; see docs/models.md.`,
    );
  },
};
