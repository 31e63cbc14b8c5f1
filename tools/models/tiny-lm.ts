/**
 * The tiny decoder-only LM (pre-LayerNorm GPT, learned positions, untied head) as ONNX, in two
 * layouts of the same weights (docs/models.md is the contract):
 *
 * - `fast`: past K/V are read-only inputs, only the new tokens' K/V come out, the caller builds
 *   the additive attention bias and logits are sliced to the last position inside the graph —
 *   so a decode step moves no KV-sized data (see the onnxruntime-node notes).
 * - `hf`: the usual exported layout (attention_mask, past_key_values.* → present.*, logits for
 *   every position), for compatibility with users' exported models.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GraphBuilder } from './onnx-builder.js';
import { BYTE_DIMS, FAST_NAMES, HF_NAMES, LN_EPS, MASK_VALUE, TINY_LM_SEED } from './tiny-lm-spec.js';
import type { TinyLmDims, TinyLmLayout } from './tiny-lm-spec.js';
import { tinyLmWeights } from './tiny-lm-weights.js';
import type { TinyLmLayerWeights, TinyLmWeights } from './tiny-lm-weights.js';

/** Options of `writeTinyLm`. */
export interface TinyLmOptions {
  readonly layout: TinyLmLayout;
  /** Weight seed (default TINY_LM_SEED); both layouts of one seed share every weight. */
  readonly seed?: number;
  /** Sizes (default BYTE_DIMS, the byte-level tiny-lm). */
  readonly dims?: TinyLmDims;
  /** The file's description (default: the byte-level LM's). */
  readonly docString?: string;
  /** The LM head's bias (default: the byte-level LM's preferences). */
  readonly headBias?: Float32Array;
}

const B = 'batch';
const T = 'seq';
const P = 'past';
const S = 'total';

function linear(g: GraphBuilder, x: string, w: string, b: string): string {
  return g.op('Add', [g.op('MatMul', [x, w]), b]);
}

function layerNorm(g: GraphBuilder, x: string, scale: string, bias: string): string {
  return g.op('LayerNormalization', [x, scale, bias], { axis: { i: -1 }, epsilon: { f: LN_EPS } });
}

/**
 * One pre-LN block; returns the new residual stream and this step's K, V ([B,H,T,Dh]).
 * `concatPast` builds past ++ new K/V (the usual layout needs it as `present`); without it the
 * past is only read (measured: batch 32, context 256, 1 thread: ≈11 ms per step vs ≈20 ms).
 */
function block(
  g: GraphBuilder,
  dims: TinyLmDims,
  l: number,
  w: TinyLmLayerWeights,
  x: string,
  bias: string,
  pastK: string,
  pastV: string,
  concatPast: boolean,
): { x: string; k: string; v: string; kAll: string; vAll: string } {
  const { dModel: D, numHeads: NUM_HEADS, headDim: HEAD_DIM, ffnDim: FFN_DIM } = dims;
  const p = (n: string): string => `layers.${l}.${n}`;
  const h = layerNorm(g, x, g.initF32(p('ln1.scale'), w.ln1Scale, [D]), g.initF32(p('ln1.bias'), w.ln1Bias, [D]));
  const qkv = linear(
    g,
    h,
    g.initF32(p('attn.qkv.weight'), w.qkvWeight, [D, 3 * D]),
    g.initF32(p('attn.qkv.bias'), w.qkvBias, [3 * D]),
  );
  // [B,T,3D] → [B,T,3H,Dh] → [B,3H,T,Dh] → q, k, v each [B,H,T,Dh]
  const heads = g.op('Transpose', [g.op('Reshape', [qkv, g.constI64([0, 0, 3 * NUM_HEADS, HEAD_DIM])])], {
    perm: { ints: [0, 2, 1, 3] },
  });
  const [q, k, v] = g.opN('Split', [heads, g.constI64([NUM_HEADS, NUM_HEADS, NUM_HEADS])], 3, { axis: { i: 1 } }) as [
    string,
    string,
    string,
  ];
  let ctx: string;
  let kAll = '';
  let vAll = '';
  const kT = (kk: string): string => g.op('Transpose', [kk], { perm: { ints: [0, 1, 3, 2] } });
  if (concatPast) {
    kAll = g.op('Concat', [pastK, k], { axis: { i: 2 } });
    vAll = g.op('Concat', [pastV, v], { axis: { i: 2 } });
    // q already carries 1/sqrt(Dh) (folded into the weights).
    const scores = g.op('Add', [g.op('MatMul', [q, kT(kAll)]), bias]);
    ctx = g.op('MatMul', [g.op('Softmax', [scores], { axis: { i: -1 } }), vAll]);
  } else {
    // Attend to past and new separately so the cache is never copied into a [.., P+T, ..]
    // tensor: only the scores ([B,H,T,P+T], small) are concatenated.
    const scores = g.op('Add', [
      g.op('Concat', [g.op('MatMul', [q, kT(pastK)]), g.op('MatMul', [q, kT(k)])], { axis: { i: 3 } }),
      bias,
    ]);
    const probs = g.op('Softmax', [scores], { axis: { i: -1 } });
    const pastLen = g.op('Shape', [pastK], { start: { i: 2 }, end: { i: 3 } });
    const axis3 = g.constI64([3]);
    const pPast = g.op('Slice', [probs, g.constI64([0]), pastLen, axis3]);
    const pNew = g.op('Slice', [probs, pastLen, g.constI64([Number.MAX_SAFE_INTEGER]), axis3]);
    ctx = g.op('Add', [g.op('MatMul', [pPast, pastV]), g.op('MatMul', [pNew, v])]);
  }
  const merged = g.op('Reshape', [g.op('Transpose', [ctx], { perm: { ints: [0, 2, 1, 3] } }), g.constI64([0, 0, D])]);
  const attn = linear(
    g,
    merged,
    g.initF32(p('attn.out.weight'), w.outWeight, [D, D]),
    g.initF32(p('attn.out.bias'), w.outBias, [D]),
  );
  const x1 = g.op('Add', [x, attn]);
  const h2 = layerNorm(g, x1, g.initF32(p('ln2.scale'), w.ln2Scale, [D]), g.initF32(p('ln2.bias'), w.ln2Bias, [D]));
  const ff = g.op('Relu', [
    linear(
      g,
      h2,
      g.initF32(p('mlp.fc1.weight'), w.fc1Weight, [D, FFN_DIM]),
      g.initF32(p('mlp.fc1.bias'), w.fc1Bias, [FFN_DIM]),
    ),
  ]);
  const out = linear(
    g,
    ff,
    g.initF32(p('mlp.fc2.weight'), w.fc2Weight, [FFN_DIM, D]),
    g.initF32(p('mlp.fc2.bias'), w.fc2Bias, [D]),
  );
  return { x: g.op('Add', [x1, out]), k, v, kAll, vAll };
}

function embed(g: GraphBuilder, d: TinyLmDims, w: TinyLmWeights, ids: string, positions: string): string {
  const tok = g.op('Gather', [g.initF32('embed.tokens', w.tokEmb, [d.vocabSize, d.dModel]), ids], { axis: { i: 0 } });
  const pos = g.op('Gather', [g.initF32('embed.positions', w.posEmb, [d.maxContext, d.dModel]), positions], {
    axis: { i: 0 },
  });
  return g.op('Add', [tok, pos]);
}

function head(g: GraphBuilder, d: TinyLmDims, w: TinyLmWeights, x: string): string {
  const h = layerNorm(
    g,
    x,
    g.initF32('ln_f.scale', w.lnfScale, [d.dModel]),
    g.initF32('ln_f.bias', w.lnfBias, [d.dModel]),
  );
  return linear(
    g,
    h,
    g.initF32('lm_head.weight', w.headWeight, [d.dModel, d.vocabSize]),
    g.initF32('lm_head.bias', w.headBias, [d.vocabSize]),
  );
}

/** Builds the fast layout: caller-built attn_bias, read-only past, new K/V and last logits out. */
export function buildTinyLmFast(w: TinyLmWeights, d: TinyLmDims = BYTE_DIMS): GraphBuilder {
  const n = FAST_NAMES;
  const { numHeads: NUM_HEADS, headDim: HEAD_DIM, numLayers: NUM_LAYERS, vocabSize: VOCAB_SIZE } = d;
  const g = new GraphBuilder('tiny-lm');
  const ids = g.input(n.inputIds, 'int64', [B, T]);
  const positions = g.input(n.positionIds, 'int64', [B, T]);
  const bias = g.input(n.attnBias, 'float32', [B, 1, T, S]);
  let x = embed(g, d, w, ids, positions);
  for (let l = 0; l < NUM_LAYERS; l++) {
    const pk = g.input(n.pastKey(l), 'float32', [B, NUM_HEADS, P, HEAD_DIM]);
    const pv = g.input(n.pastValue(l), 'float32', [B, NUM_HEADS, P, HEAD_DIM]);
    const r = block(g, d, l, w.layers[l]!, x, bias, pk, pv, false);
    x = r.x;
    g.output(n.newKey(l), 'float32', [B, NUM_HEADS, T, HEAD_DIM], r.k);
    g.output(n.newValue(l), 'float32', [B, NUM_HEADS, T, HEAD_DIM], r.v);
  }
  // Slice to the last `num_logits` positions before the final norm and head: [B,T,D] → [B,N,D].
  // A decode or prefill asks for 1; a speculative verify for its k+1 positions. (An input with
  // a default initializer would be optional, but onnxruntime folds it and ignores the feed.)
  const numLogits = g.input(n.numLogits, 'int64', [1]);
  const lastN = g.op('Slice', [x, g.op('Neg', [numLogits]), g.constI64([Number.MAX_SAFE_INTEGER]), g.constI64([1])]);
  g.output(n.logits, 'float32', [B, 'logit_positions', VOCAB_SIZE], head(g, d, w, lastN));
  return g;
}

/** The causal + padding mask of the usual layout, built in-graph: [B,1,T,P+T] of 0 / MASK_VALUE. */
function hfBias(g: GraphBuilder, ids: string, mask: string): string {
  const t = g.op('Squeeze', [g.op('Shape', [ids], { start: { i: 1 } }), g.constI64([0])]);
  const s = g.op('Squeeze', [g.op('Shape', [mask], { start: { i: 1 } }), g.constI64([0])]);
  const zero = g.initI64('int_zero', [0], []);
  const one = g.initI64('int_one', [1], []);
  const qPos = g.op('Range', [g.op('Sub', [s, t]), s, one]); // absolute slots of the new tokens
  const kPos = g.op('Range', [zero, s, one]);
  const causal = g.op('LessOrEqual', [
    g.op('Unsqueeze', [kPos, g.constI64([0])]),
    g.op('Unsqueeze', [qPos, g.constI64([1])]),
  ]); // [T,S]
  const keep = g.op('Unsqueeze', [g.op('Cast', [mask], { to: { i: 9 } }), g.constI64([1, 2])]); // [B,1,1,S] bool
  const allowed = g.op('And', [causal, keep]);
  return g.op('Where', [allowed, g.constF32(0), g.constF32(MASK_VALUE)]);
}

/** Builds the usual exported layout: attention_mask, past_key_values.* in, present.* and all logits out. */
export function buildTinyLmHf(w: TinyLmWeights, d: TinyLmDims = BYTE_DIMS): GraphBuilder {
  const n = HF_NAMES;
  const { numHeads: NUM_HEADS, headDim: HEAD_DIM, numLayers: NUM_LAYERS, vocabSize: VOCAB_SIZE } = d;
  const g = new GraphBuilder('tiny-lm-hf');
  const ids = g.input(n.inputIds, 'int64', [B, T]);
  const mask = g.input(n.attentionMask, 'int64', [B, S]);
  const positions = g.input(n.positionIds, 'int64', [B, T]);
  const bias = hfBias(g, ids, mask);
  let x = embed(g, d, w, ids, positions);
  for (let l = 0; l < NUM_LAYERS; l++) {
    const pk = g.input(n.pastKey(l), 'float32', [B, NUM_HEADS, P, HEAD_DIM]);
    const pv = g.input(n.pastValue(l), 'float32', [B, NUM_HEADS, P, HEAD_DIM]);
    const r = block(g, d, l, w.layers[l]!, x, bias, pk, pv, true);
    x = r.x;
    g.output(n.presentKey(l), 'float32', [B, NUM_HEADS, S, HEAD_DIM], r.kAll);
    g.output(n.presentValue(l), 'float32', [B, NUM_HEADS, S, HEAD_DIM], r.vAll);
  }
  g.output(n.logits, 'float32', [B, T, VOCAB_SIZE], head(g, d, w, x));
  return g;
}

/** Writes `dir/model.onnx` for the given layout; returns the file path. */
export function writeTinyLm(dir: string, opts: TinyLmOptions): string {
  mkdirSync(dir, { recursive: true });
  const seed = opts.seed ?? TINY_LM_SEED;
  const d = opts.dims ?? BYTE_DIMS;
  const w = tinyLmWeights(seed, d, opts.headBias);
  const g = opts.layout === 'fast' ? buildTinyLmFast(w, d) : buildTinyLmHf(w, d);
  const file = join(dir, 'model.onnx');
  g.write(file, opts.docString ?? `tsserve tiny byte-level LM (random weights, seed ${seed}), ${opts.layout} layout`);
  return file;
}
