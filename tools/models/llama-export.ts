/**
 * A Llama-style decoder exported as Hugging Face's Optimum writes one, for the tests and benches of
 * users' exports (hf-dir.ts writes the directory around it): RMSNorm, rotary positions, grouped-
 * query attention (K/V heads fewer than query heads), SwiGLU MLP, untied head; inputs
 * `input_ids`, `attention_mask`, `position_ids` (optional: without it positions come from the
 * mask, as Optimum's exports of some models do), `past_key_values.N.key/value` [B, kvHeads, P, Dh]
 * → `logits` [B, T, V] and `present.N.key/value` [B, kvHeads, P+T, Dh]; a merged decoder also
 * takes `use_cache_branch` (false: the past is ignored). With `dtype: float16` the weights, the
 * K/V and the logits are half floats; the arithmetic inside is float32 (Cast at each use), since
 * onnxruntime's CPU provider lacks float16 kernels for several of these ops. Random seeded weights.
 */
import { GraphBuilder } from './onnx-builder.js';
import { Prng } from './prng.js';

/** The architecture of one export (config.json's fields, in our names). */
export interface LlamaExportSpec {
  readonly vocabSize: number;
  readonly hiddenSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly intermediateSize: number;
  readonly maxPositions: number;
  readonly ropeTheta: number;
  readonly rmsEps: number;
  readonly dtype: 'float32' | 'float16';
  /** Optimum's merged decoder (`use_cache_branch` input). */
  readonly merged: boolean;
  /** The graph takes `position_ids`. */
  readonly positionIds: boolean;
  readonly seed: number;
}

const B = 'batch_size';
const T = 'sequence_length';
const P = 'past_sequence_length';
const S = 'total_sequence_length';
/** A masked score: exp underflows to exactly 0 in float32. */
const MASK = -1e9;

/** float32 → IEEE half bit pattern (round to nearest even; no NaN payloads needed here). */
export function toHalf(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer)[0]!;
  const sign = (u >>> 16) & 0x8000;
  const exp = ((u >>> 23) & 0xff) - 127 + 15;
  const mant = u & 0x7fffff;
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    const m = (mant | 0x800000) >> (1 - exp);
    return sign | ((m + 0x1000) >> 13);
  }
  const h = sign | (exp << 10) | (mant >> 13);
  const rest = mant & 0x1fff;
  return rest > 0x1000 || (rest === 0x1000 && (h & 1) === 1) ? h + 1 : h;
}

/** The graph of `spec`. */
export function buildLlamaExport(spec: LlamaExportSpec): GraphBuilder {
  const { hiddenSize: D, numHeads: H, numKvHeads: KV, vocabSize: V } = spec;
  const Dh = D / H;
  const group = H / KV;
  if (!Number.isInteger(Dh) || !Number.isInteger(group) || Dh % 2 !== 0)
    throw new Error(`llama export: hidden ${D}, heads ${H}, kv heads ${KV} do not divide`);
  const half = spec.dtype === 'float16';
  const rng = new Prng(spec.seed);
  const g = new GraphBuilder('llama-export');
  const f32 = (x: string): string => (half ? g.op('Cast', [x], { to: { i: 1 } }) : x);
  const out16 = (x: string): string => (half ? g.op('Cast', [x], { to: { i: 10 } }) : x);
  /** A weight initializer (half in a float16 export, cast to float32 where it is used). */
  const weight = (name: string, data: Float32Array, dims: readonly number[]): string =>
    half ? f32(g.initF16(name, Uint16Array.from(data, toHalf), dims)) : g.initF32(name, data, dims);
  const matrix = (name: string, rows: number, cols: number, std: number): string =>
    weight(name, rng.normals(rows * cols, std), [rows, cols]);
  const rmsNorm = (x: string, name: string): string => {
    const ms = g.op('ReduceMean', [g.op('Mul', [x, x])], { axes: { ints: [-1] }, keepdims: { i: 1 } });
    const inv = g.op('Reciprocal', [g.op('Sqrt', [g.op('Add', [ms, g.constF32(spec.rmsEps)])])]);
    return g.op('Mul', [g.op('Mul', [x, inv]), weight(name, new Float32Array(D).fill(1), [D])]);
  };

  const ids = g.input('input_ids', 'int64', [B, T]);
  const mask = g.input('attention_mask', 'int64', [B, S]);
  const elem = half ? 'float16' : 'float32';
  let positions: string;
  if (spec.positionIds) positions = g.input('position_ids', 'int64', [B, T]);
  else {
    // As Hugging Face derives them: cumsum(mask) - 1 over the whole sequence, the last T kept.
    const all = g.op('Sub', [g.op('CumSum', [mask, g.initI64('axis_one', [1], [])]), g.constI64([1])]);
    const t = g.op('Shape', [ids], { start: { i: 1 }, end: { i: 2 } });
    const s = g.op('Shape', [mask], { start: { i: 1 }, end: { i: 2 } });
    const last = g.op('Slice', [all, g.op('Sub', [s, t]), s, g.constI64([1])]);
    positions = g.op('Max', [last, g.initI64('zero_i64', [0], [])]);
  }
  const useCache = spec.merged ? g.input('use_cache_branch', 'bool', [1]) : null;

  // Causal + padding bias [B,1,T,S], tiled to [B,1,group*T,S] for the grouped queries.
  const tDim = g.op('Squeeze', [g.op('Shape', [ids], { start: { i: 1 }, end: { i: 2 } }), g.constI64([0])]);
  const sDim = g.op('Squeeze', [g.op('Shape', [mask], { start: { i: 1 }, end: { i: 2 } }), g.constI64([0])]);
  const zero = g.initI64('int_zero', [0], []);
  const one = g.initI64('int_one', [1], []);
  const qPos = g.op('Range', [g.op('Sub', [sDim, tDim]), sDim, one]);
  const kPos = g.op('Range', [zero, sDim, one]);
  const causal = g.op('LessOrEqual', [
    g.op('Unsqueeze', [kPos, g.constI64([0])]),
    g.op('Unsqueeze', [qPos, g.constI64([1])]),
  ]);
  const keep = g.op('Unsqueeze', [g.op('Cast', [mask], { to: { i: 9 } }), g.constI64([1, 2])]);
  const bias = g.op('Where', [g.op('And', [causal, keep]), g.constF32(0), g.constF32(MASK)]);
  const groupBias = group === 1 ? bias : g.op('Tile', [bias, g.constI64([1, 1, group, 1])]);

  // Rotary tables [maxPositions, Dh/2], gathered by position: [B,1,T,Dh/2].
  const cos = new Float32Array(spec.maxPositions * (Dh / 2));
  const sin = new Float32Array(spec.maxPositions * (Dh / 2));
  for (let p = 0; p < spec.maxPositions; p++)
    for (let i = 0; i < Dh / 2; i++) {
      const a = p / spec.ropeTheta ** ((2 * i) / Dh);
      cos[p * (Dh / 2) + i] = Math.cos(a);
      sin[p * (Dh / 2) + i] = Math.sin(a);
    }
  const at = (table: string): string =>
    g.op('Unsqueeze', [g.op('Gather', [table, positions], { axis: { i: 0 } }), g.constI64([1])]);
  const cosT = at(g.initF32('rope.cos', cos, [spec.maxPositions, Dh / 2]));
  const sinT = at(g.initF32('rope.sin', sin, [spec.maxPositions, Dh / 2]));
  const rope = (x: string): string => {
    const [x1, x2] = g.opN('Split', [x, g.constI64([Dh / 2, Dh / 2])], 2, { axis: { i: -1 } }) as [string, string];
    const a = g.op('Sub', [g.op('Mul', [x1, cosT]), g.op('Mul', [x2, sinT])]);
    const b = g.op('Add', [g.op('Mul', [x2, cosT]), g.op('Mul', [x1, sinT])]);
    return g.op('Concat', [a, b], { axis: { i: -1 } });
  };
  const heads = (x: string, n: number): string =>
    g.op('Transpose', [g.op('Reshape', [x, g.constI64([0, 0, n, Dh])])], { perm: { ints: [0, 2, 1, 3] } });

  let x = g.op('Gather', [weight('model.embed_tokens.weight', rng.normals(V * D, 1), [V, D]), ids], {
    axis: { i: 0 },
  });
  const std = 1 / Math.sqrt(D);
  for (let l = 0; l < spec.numLayers; l++) {
    const p = (n: string): string => `model.layers.${l}.${n}`;
    const h = rmsNorm(x, p('input_layernorm.weight'));
    const q = rope(heads(g.op('MatMul', [h, matrix(p('self_attn.q_proj.weight'), D, H * Dh, std)]), H));
    const k = rope(heads(g.op('MatMul', [h, matrix(p('self_attn.k_proj.weight'), D, KV * Dh, std)]), KV));
    const v = heads(g.op('MatMul', [h, matrix(p('self_attn.v_proj.weight'), D, KV * Dh, std)]), KV);
    let pastK = f32(g.input(`past_key_values.${l}.key`, elem, [B, KV, P, Dh]));
    let pastV = f32(g.input(`past_key_values.${l}.value`, elem, [B, KV, P, Dh]));
    if (useCache !== null) {
      // The branch without cache reads no past: it is cut to length 0.
      const keepLen = g.op('Mul', [
        g.op('Shape', [pastK], { start: { i: 2 }, end: { i: 3 } }),
        g.op('Cast', [useCache], { to: { i: 7 } }),
      ]);
      pastK = g.op('Slice', [pastK, g.constI64([0]), keepLen, g.constI64([2])]);
      pastV = g.op('Slice', [pastV, g.constI64([0]), keepLen, g.constI64([2])]);
    }
    const kAll = g.op('Concat', [pastK, k], { axis: { i: 2 } });
    const vAll = g.op('Concat', [pastV, v], { axis: { i: 2 } });
    g.output(`present.${l}.key`, elem, [B, KV, S, Dh], out16(kAll));
    g.output(`present.${l}.value`, elem, [B, KV, S, Dh], out16(vAll));
    // Queries grouped per K/V head: [B,H,T,Dh] → [B,KV,group*T,Dh] (query head h reads K/V head
    // h / group, as Hugging Face's repeat_kv), so the K/V are never repeated.
    const qg = g.op('Reshape', [g.op('Mul', [q, g.constF32(1 / Math.sqrt(Dh))]), g.constI64([0, KV, -1, Dh])]);
    const kT = g.op('Transpose', [kAll], { perm: { ints: [0, 1, 3, 2] } });
    const probs = g.op('Softmax', [g.op('Add', [g.op('MatMul', [qg, kT]), groupBias])], { axis: { i: -1 } });
    const ctx = g.op('Reshape', [g.op('MatMul', [probs, vAll]), g.constI64([0, H, -1, Dh])]);
    const merged = g.op('Reshape', [g.op('Transpose', [ctx], { perm: { ints: [0, 2, 1, 3] } }), g.constI64([0, 0, D])]);
    x = g.op('Add', [x, g.op('MatMul', [merged, matrix(p('self_attn.o_proj.weight'), H * Dh, D, std)])]);
    const h2 = rmsNorm(x, p('post_attention_layernorm.weight'));
    const I = spec.intermediateSize;
    const gate = g.op('MatMul', [h2, matrix(p('mlp.gate_proj.weight'), D, I, std)]);
    const up = g.op('MatMul', [h2, matrix(p('mlp.up_proj.weight'), D, I, std)]);
    const act = g.op('Mul', [g.op('Mul', [gate, g.op('Sigmoid', [gate])]), up]);
    x = g.op('Add', [x, g.op('MatMul', [act, matrix(p('mlp.down_proj.weight'), I, D, 1 / Math.sqrt(I))])]);
  }
  const logits = g.op('MatMul', [rmsNorm(x, 'model.norm.weight'), matrix('lm_head.weight', D, V, 2 / Math.sqrt(D))]);
  g.output('logits', elem, [B, T, V], out16(logits));
  return g;
}
