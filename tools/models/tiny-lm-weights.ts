/**
 * Seeded random weights of the tiny LM, scaled so its output is not degenerate: attention is
 * peaked enough for context to matter, logits have a spread of a few units, printable ASCII is
 * favoured, PAD/BOS are never chosen and EOS is rare. Not trained: the text means nothing.
 */
import { Prng } from './prng.js';
import { BOS_ID, BYTE_DIMS, EOS_ID, PAD_ID } from './tiny-lm-spec.js';
import type { TinyLmDims } from './tiny-lm-spec.js';

/** One transformer block's parameters; matrices are [in, out] (x @ W). */
export interface TinyLmLayerWeights {
  readonly ln1Scale: Float32Array;
  readonly ln1Bias: Float32Array;
  /** [D, 3D]: q | k | v, with 1/sqrt(headDim) already folded into the q part. */
  readonly qkvWeight: Float32Array;
  readonly qkvBias: Float32Array;
  readonly outWeight: Float32Array;
  readonly outBias: Float32Array;
  readonly ln2Scale: Float32Array;
  readonly ln2Bias: Float32Array;
  readonly fc1Weight: Float32Array;
  readonly fc1Bias: Float32Array;
  readonly fc2Weight: Float32Array;
  readonly fc2Bias: Float32Array;
}

/** All parameters of the tiny LM. */
export interface TinyLmWeights {
  /** [V, D] */
  readonly tokEmb: Float32Array;
  /** [MAX_CONTEXT, D] learned positions */
  readonly posEmb: Float32Array;
  readonly layers: readonly TinyLmLayerWeights[];
  readonly lnfScale: Float32Array;
  readonly lnfBias: Float32Array;
  /** [D, V] (separate from tokEmb: an untied head) */
  readonly headWeight: Float32Array;
  readonly headBias: Float32Array;
}

function filled(n: number, v: number): Float32Array {
  return new Float32Array(n).fill(v);
}

function layerNormParams(rng: Prng, D: number): [Float32Array, Float32Array] {
  const scale = rng.normals(D, 0.1);
  for (let i = 0; i < D; i++) scale[i]! += 1;
  return [scale, rng.normals(D, 0.02)];
}

/** The byte-level head bias: printable ASCII favoured, PAD/BOS never chosen, EOS rare. */
function byteHeadBias(): Float32Array {
  const headBias = filled(BYTE_DIMS.vocabSize, -6);
  for (let b = 32; b < 127; b++) headBias[b] = 0;
  for (let b = 97; b <= 122; b++) headBias[b] = 1.5; // lowercase letters and spaces look more like text
  headBias[32] = 2;
  headBias[10] = -1; // newline, now and then
  headBias[EOS_ID] = -3;
  headBias[BOS_ID] = -30;
  headBias[PAD_ID] = -30;
  return headBias;
}

/** Generates every weight from `seed` in a fixed order; `headBias` (default: the byte model's) sets the vocabulary's preferences. */
export function tinyLmWeights(seed: number, dims: TinyLmDims = BYTE_DIMS, headBias?: Float32Array): TinyLmWeights {
  const rng = new Prng(seed);
  const { dModel: D, headDim: HEAD_DIM, numLayers: NUM_LAYERS, ffnDim: FFN_DIM, maxContext: MAX_CONTEXT } = dims;
  const VOCAB_SIZE = dims.vocabSize;
  const tokEmb = rng.normals(VOCAB_SIZE * D, 1);
  const posEmb = rng.normals(MAX_CONTEXT * D, 0.5);
  const layers: TinyLmLayerWeights[] = [];
  for (let l = 0; l < NUM_LAYERS; l++) {
    const [ln1Scale, ln1Bias] = layerNormParams(rng, D);
    // q·k std ≈ (D·std²) after the 1/sqrt(Dh) scale: std 0.09 gives scores of spread ≈ 2.
    const qkvWeight = rng.normals(D * 3 * D, 0.09);
    const qkvBias = rng.normals(3 * D, 0.02);
    const qScale = 1 / Math.sqrt(HEAD_DIM);
    for (let i = 0; i < D; i++) {
      for (let j = 0; j < D; j++) qkvWeight[i * 3 * D + j]! *= qScale;
    }
    for (let j = 0; j < D; j++) qkvBias[j]! *= qScale;
    const outWeight = rng.normals(D * D, 0.7 / Math.sqrt(D));
    const outBias = rng.normals(D, 0.02);
    const [ln2Scale, ln2Bias] = layerNormParams(rng, D);
    const fc1Weight = rng.normals(D * FFN_DIM, Math.sqrt(2 / D));
    const fc1Bias = rng.normals(FFN_DIM, 0.02);
    const fc2Weight = rng.normals(FFN_DIM * D, 0.5 / Math.sqrt(FFN_DIM));
    const fc2Bias = rng.normals(D, 0.02);
    layers.push({
      ln1Scale,
      ln1Bias,
      qkvWeight,
      qkvBias,
      outWeight,
      outBias,
      ln2Scale,
      ln2Bias,
      fc1Weight,
      fc1Bias,
      fc2Weight,
      fc2Bias,
    });
  }
  const [lnfScale, lnfBias] = layerNormParams(rng, D);
  const headWeight = rng.normals(D * VOCAB_SIZE, 2.5 / Math.sqrt(D));
  if (headBias !== undefined && headBias.length !== VOCAB_SIZE)
    throw new Error(`headBias has ${headBias.length} entries for a vocabulary of ${VOCAB_SIZE}`);
  return { tokEmb, posEmb, layers, lnfScale, lnfBias, headWeight, headBias: headBias ?? byteHeadBias() };
}
