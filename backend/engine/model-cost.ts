/**
 * What a model run costs, estimated from the model's shapes: the weights a step reads, the K/V
 * bytes of a position, and per engine step the FLOPs and the bytes read and written (vLLM's MFU
 * counters, `--enable-mfu-metrics`). The shapes are those of the tiny LMs' GPT-2-style decoder
 * (tools/models/tiny-lm.ts): per layer a fused QKV projection, an output projection, a two-matrix
 * MLP, each with a bias, and two LayerNorms; a vocabulary head with a bias. float32 throughout.
 * bench:roofline reads its weights and K/V bytes from here too. docs/llm-metrics.md states the
 * formulas.
 */
import type { RunItem } from './runner.js';

/** The shapes the estimate is made from. */
export interface CostShapes {
  readonly vocabSize: number;
  /** d: the model width. */
  readonly hiddenSize: number;
  /** f: the MLP width. */
  readonly intermediateSize: number;
  readonly numLayers: number;
  /** K/V heads per layer. */
  readonly numHeads: number;
  readonly headDim: number;
}

/** Bytes of one float32. */
const F32 = 4;

/** Parameters of one layer: QKV d×3d + 3d, output d×d + d, MLP d×f + f + f×d + d, two LayerNorms 4d. */
export function layerParams(s: CostShapes): number {
  const d = s.hiddenSize;
  const f = s.intermediateSize;
  return d * 3 * d + 3 * d + d * d + d + d * f + f + f * d + d + 4 * d;
}

/** Parameters of the vocabulary head: d×V + V. */
export function headParams(s: CostShapes): number {
  return s.hiddenSize * s.vocabSize + s.vocabSize;
}

/** Bytes of weights a step reads: every layer and the head (embedding rows are gathered, not read whole). */
export function weightBytes(s: CostShapes): number {
  return F32 * (s.numLayers * layerParams(s) + headParams(s));
}

/** Bytes of K/V one position holds: K and V, every layer, every head. */
export function kvBytesPerToken(s: Pick<CostShapes, 'numLayers' | 'numHeads' | 'headDim'>): number {
  return 2 * s.numLayers * s.numHeads * s.headDim * F32;
}

/** One step's estimate. */
export interface StepCost {
  readonly flops: number;
  readonly readBytes: number;
  readonly writeBytes: number;
}

/**
 * The estimate of one step's items. T tokens computed, R logit rows asked for, an item computing
 * `count` tokens after `start` cached ones:
 *
 * - flops = 2 × layers' params × T + 2 × head params × R + attention, where an item's attention
 *   is 4 × layers × heads × headDim × (its tokens' attended positions: count × start +
 *   count × (count + 1) / 2), QKᵀ and the weighted sum of V;
 * - read bytes = the weights once (a step with items) + the K/V of every item's `start` positions;
 * - write bytes = the K/V of the T new positions + 4 × V × R of logits.
 */
export function stepCost(s: CostShapes, items: readonly RunItem[]): StepCost {
  if (items.length === 0) return { flops: 0, readBytes: 0, writeBytes: 0 };
  const kv = kvBytesPerToken(s);
  const attnPerPos = 4 * s.numLayers * s.numHeads * s.headDim;
  let tokens = 0;
  let rows = 0;
  let attended = 0;
  let past = 0;
  for (const it of items) {
    tokens += it.count;
    if (it.wantLogits) rows += it.numLogits ?? 1;
    attended += it.count * it.start + (it.count * (it.count + 1)) / 2;
    past += it.start;
  }
  return {
    flops: 2 * s.numLayers * layerParams(s) * tokens + 2 * headParams(s) * rows + attnPerPos * attended,
    readBytes: weightBytes(s) + kv * past,
    writeBytes: kv * tokens + F32 * s.vocabSize * rows,
  };
}
