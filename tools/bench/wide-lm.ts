/**
 * A bench-only wider variant of the tiny LM: the same fast layout, names, vocabulary and
 * engine contract (docs/models.md), but d_model 512, 8 heads of 64, FFN 2048, 4 layers: about
 * 50 MB of weights, above a 32 MiB L3, where batching decode steps pays (the weights are read
 * once a step for every row). Random weights of a small spread: its text means nothing, only
 * its speed is measured. Not in any model store: `bench:roofline` writes it into a temp dir.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { weightBytes as modelWeightBytes } from '../../backend/engine/model-cost.js';
import { GraphBuilder } from '../models/onnx-builder.js';
import { writeModelConfig } from '../models/model-config.js';
import { Prng } from '../models/prng.js';
import { tinyLmEngineConfig } from '../models/demo-models.js';
import { FAST_NAMES, LN_EPS, MAX_CONTEXT, NUM_LAYERS, VOCAB_SIZE } from '../models/tiny-lm-spec.js';

/** The variant's shapes (layers, vocabulary and context are the tiny LM's). */
export const WIDE_LM = { dModel: 512, numHeads: 8, headDim: 64, ffnDim: 2048, numLayers: NUM_LAYERS } as const;

/**
 * float32 bytes a decode step reads of weights: every layer's matrices and the head (embedding
 * rows aside), the product's estimate (backend/engine/model-cost.ts) on the tiny LM's vocabulary.
 */
export function weightBytes(d: number, ffn: number, layers: number): number {
  return modelWeightBytes({
    vocabSize: VOCAB_SIZE,
    hiddenSize: d,
    intermediateSize: ffn,
    numLayers: layers,
    // The weights do not depend on the head split.
    numHeads: 1,
    headDim: d,
  });
}

/** Writes the wide LM (model.onnx and model-config.yaml with its engine block) into `dir`. */
export function writeWideLm(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const { dModel: D, numHeads: H, headDim: Dh, ffnDim: F } = WIDE_LM;
  const rng = new Prng(512);
  const w = (n: number, std: number): Float32Array => rng.normals(n, std);
  const n = FAST_NAMES;
  const g = new GraphBuilder('wide-lm');
  const ids = g.input(n.inputIds, 'int64', ['batch', 'seq']);
  const positions = g.input(n.positionIds, 'int64', ['batch', 'seq']);
  const bias = g.input(n.attnBias, 'float32', ['batch', 1, 'seq', 'total']);
  const lin = (x: string, name: string, i: number, o: number): string =>
    g.op('Add', [
      g.op('MatMul', [x, g.initF32(`${name}.weight`, w(i * o, 1 / Math.sqrt(i)), [i, o])]),
      g.initF32(`${name}.bias`, w(o, 0.02), [o]),
    ]);
  const norm = (x: string, name: string): string =>
    g.op(
      'LayerNormalization',
      [
        x,
        g.initF32(`${name}.scale`, new Float32Array(D).fill(1), [D]),
        g.initF32(`${name}.bias`, new Float32Array(D), [D]),
      ],
      {
        axis: { i: -1 },
        epsilon: { f: LN_EPS },
      },
    );
  let x = g.op('Add', [
    g.op('Gather', [g.initF32('embed.tokens', w(VOCAB_SIZE * D, 1), [VOCAB_SIZE, D]), ids], { axis: { i: 0 } }),
    g.op('Gather', [g.initF32('embed.positions', w(MAX_CONTEXT * D, 0.5), [MAX_CONTEXT, D]), positions], {
      axis: { i: 0 },
    }),
  ]);
  const kT = (k: string): string => g.op('Transpose', [k], { perm: { ints: [0, 1, 3, 2] } });
  for (let l = 0; l < WIDE_LM.numLayers; l++) {
    const p = `layers.${l}`;
    const pk = g.input(n.pastKey(l), 'float32', ['batch', H, 'past', Dh]);
    const pv = g.input(n.pastValue(l), 'float32', ['batch', H, 'past', Dh]);
    const qkv = lin(norm(x, `${p}.ln1`), `${p}.attn.qkv`, D, 3 * D);
    const heads = g.op('Transpose', [g.op('Reshape', [qkv, g.constI64([0, 0, 3 * H, Dh])])], {
      perm: { ints: [0, 2, 1, 3] },
    });
    const [q, k, v] = g.opN('Split', [heads, g.constI64([H, H, H])], 3, { axis: { i: 1 } }) as [string, string, string];
    // The tiny LM's read-only past: scores of past and new concatenated, never the cache.
    const scores = g.op('Add', [
      g.op('Concat', [g.op('MatMul', [q, kT(pk)]), g.op('MatMul', [q, kT(k)])], { axis: { i: 3 } }),
      bias,
    ]);
    const probs = g.op('Softmax', [scores], { axis: { i: -1 } });
    const pastLen = g.op('Shape', [pk], { start: { i: 2 }, end: { i: 3 } });
    const axis3 = g.constI64([3]);
    const ctx = g.op('Add', [
      g.op('MatMul', [g.op('Slice', [probs, g.constI64([0]), pastLen, axis3]), pv]),
      g.op('MatMul', [g.op('Slice', [probs, pastLen, g.constI64([Number.MAX_SAFE_INTEGER]), axis3]), v]),
    ]);
    const merged = g.op('Reshape', [g.op('Transpose', [ctx], { perm: { ints: [0, 2, 1, 3] } }), g.constI64([0, 0, D])]);
    const x1 = g.op('Add', [x, lin(merged, `${p}.attn.out`, D, D)]);
    const ff = lin(g.op('Relu', [lin(norm(x1, `${p}.ln2`), `${p}.mlp.fc1`, D, F)]), `${p}.mlp.fc2`, F, D);
    x = g.op('Add', [x1, ff]);
    g.output(n.newKey(l), 'float32', ['batch', H, 'seq', Dh], k);
    g.output(n.newValue(l), 'float32', ['batch', H, 'seq', Dh], v);
  }
  const numLogits = g.input(n.numLogits, 'int64', [1]);
  const lastN = g.op('Slice', [x, g.op('Neg', [numLogits]), g.constI64([Number.MAX_SAFE_INTEGER]), g.constI64([1])]);
  g.output(
    n.logits,
    'float32',
    ['batch', 'logit_positions', VOCAB_SIZE],
    lin(norm(lastN, 'ln_f'), 'lm_head', D, VOCAB_SIZE),
  );
  g.write(join(dir, 'model.onnx'), 'tsserve bench-only wide LM (d_model 512, random weights), fast layout');
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
      engine: { ...tinyLmEngineConfig('fast'), numHeads: H, headDim: Dh },
    },
    'wide-lm: bench-only d_model 512 variant of the tiny LM (random weights), bench:roofline',
  );
}
