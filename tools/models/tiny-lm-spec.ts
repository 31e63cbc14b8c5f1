/**
 * The tiny decoder-only LM's dimensions and special token ids: the contract shared by the model
 * writer (tools/models/tiny-lm.ts), the model-config.yaml `engine:` block and the engine's
 * byte-level tokenizer. Ids 0..255 are raw UTF-8 bytes.
 */

/** Beginning of sequence: prepended to every prompt. */
export const BOS_ID = 256;
/** End of sequence: generation stops here unless ignore_eos. */
export const EOS_ID = 257;
/** Padding: never generated (its logit is pushed far down), safe filler for unused slots. */
export const PAD_ID = 258;
/** 256 bytes + BOS + EOS + PAD. */
export const VOCAB_SIZE = 259;
export const D_MODEL = 256;
export const NUM_HEADS = 4;
export const HEAD_DIM = 64;
export const NUM_LAYERS = 4;
/** MLP width (4 × d_model). */
export const FFN_DIM = 1024;
/** Learned position embeddings cover positions 0..MAX_CONTEXT-1. */
export const MAX_CONTEXT = 1024;
/** LayerNormalization epsilon. */
export const LN_EPS = 1e-5;
/** Value of a masked entry in `attn_bias` (exp underflows to exactly 0 in float32). */
export const MASK_VALUE = -1e9;
/** Seed of the demo store's weights. */
export const TINY_LM_SEED = 1234;

/** The sizes of one tiny LM (the byte-level demo's are the constants above). */
export interface TinyLmDims {
  readonly vocabSize: number;
  readonly dModel: number;
  readonly numHeads: number;
  readonly headDim: number;
  readonly numLayers: number;
  readonly ffnDim: number;
  readonly maxContext: number;
}

/** The byte-level tiny LM (`tiny-lm`, and the engine tests' hf layout of the same weights). */
export const BYTE_DIMS: TinyLmDims = Object.freeze({
  vocabSize: VOCAB_SIZE,
  dModel: D_MODEL,
  numHeads: NUM_HEADS,
  headDim: HEAD_DIM,
  numLayers: NUM_LAYERS,
  ffnDim: FFN_DIM,
  maxContext: MAX_CONTEXT,
});

/**
 * `tiny-lm-hf`: GPT-2's 50257-token vocabulary on a narrow model (d 64), so the embedding and
 * the vocabulary projection (50257 × 64 floats, 12.9 MB each) stay cheap to store and to run.
 */
export const GPT2_DIMS: TinyLmDims = Object.freeze({
  vocabSize: 50257,
  dModel: 64,
  numHeads: 2,
  headDim: 32,
  numLayers: 2,
  ffnDim: 256,
  maxContext: MAX_CONTEXT,
});

/** The two graph layouts of the same weights. */
export type TinyLmLayout = 'fast' | 'hf';

/** Input/output names of the fast layout, per layer L. */
export const FAST_NAMES = {
  inputIds: 'input_ids',
  positionIds: 'position_ids',
  attnBias: 'attn_bias',
  /** How many last positions get logits ([1] int64; the runner feeds 1 except to verify drafts). */
  numLogits: 'num_logits',
  pastKey: (l: number): string => `past_key.${l}`,
  pastValue: (l: number): string => `past_value.${l}`,
  logits: 'logits',
  newKey: (l: number): string => `new_key.${l}`,
  newValue: (l: number): string => `new_value.${l}`,
} as const;

/** Input/output names of the usual exported (Hugging Face / Optimum) layout, per layer L. */
export const HF_NAMES = {
  inputIds: 'input_ids',
  attentionMask: 'attention_mask',
  positionIds: 'position_ids',
  pastKey: (l: number): string => `past_key_values.${l}.key`,
  pastValue: (l: number): string => `past_key_values.${l}.value`,
  logits: 'logits',
  presentKey: (l: number): string => `present.${l}.key`,
  presentValue: (l: number): string => `present.${l}.value`,
} as const;

/** The `engine:` settings describing the model itself (the engine adds its own knobs). */
export function tinyLmEngineSpec(layout: TinyLmLayout): Readonly<Record<string, unknown>> {
  return {
    layout,
    vocabSize: VOCAB_SIZE,
    numLayers: NUM_LAYERS,
    numHeads: NUM_HEADS,
    headDim: HEAD_DIM,
    bosTokenId: BOS_ID,
    eosTokenId: EOS_ID,
    padTokenId: PAD_ID,
    maxModelLen: MAX_CONTEXT,
    // The position table's size, written so that a larger max_model_len (`tsserve generate
    // --max-model-len 2000`) is refused at load; unwritten, it defaulted to maxModelLen and so
    // grew with it, and a prompt past 1024 tokens failed in the model's Gather.
    maxContext: MAX_CONTEXT,
  };
}
