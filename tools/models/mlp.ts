/**
 * The `mlp` demo classifier: 784 → hidden → hidden → 10, Relu between layers and a final
 * Softmax. Input `input` float32 [batch, 784], output `probabilities` float32 [batch, 10].
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { GraphBuilder } from './onnx-builder.js';
import { Prng } from './prng.js';

/** Input width (a flattened 28×28 image) and number of classes. */
export const MLP_INPUT = 784;
export const MLP_CLASSES = 10;
/** Hidden width of `mlp` (a batch of 32 costs a few ms on 1 thread). */
export const MLP_HIDDEN = 1024;
/** Hidden width of `mlp-heavy`. */
export const MLP_HEAVY_HIDDEN = 2048;
/** How often `mlp-heavy` applies its hidden layer (a batch of 32 costs ≥ 20 ms on 1 thread). */
export const MLP_HEAVY_REPEAT = 6;

/** Seed of the demo store's `mlp` (and `custom`, the same network behind a user handler). */
export const MLP_SEED = 42;
/** Seed of `mlp-heavy`. */
export const MLP_HEAVY_SEED = 43;

/** Options of `writeMlp`. */
export interface MlpOptions {
  readonly hidden: number;
  readonly seed: number;
  /**
   * How many times the hidden→hidden layer is applied (default 1). Repeats share one weight
   * matrix, so compute grows without growing the file (mlp-heavy stays ~25 MB, not ~90 MB).
   */
  readonly repeat?: number;
}

/** Builds the MLP graph with He-initialized weights from `seed`. */
export function buildMlp(opts: MlpOptions): GraphBuilder {
  const rng = new Prng(opts.seed);
  const g = new GraphBuilder('mlp');
  let x = g.input('input', 'float32', ['batch', MLP_INPUT]);
  const widths = [MLP_INPUT, opts.hidden, opts.hidden, MLP_CLASSES];
  for (let i = 0; i < 3; i++) {
    const fanIn = widths[i]!;
    const fanOut = widths[i + 1]!;
    // Gemm with transB: weights stored [out, in], as PyTorch's Linear exports them.
    const w = g.initF32(`fc${i}.weight`, rng.normals(fanOut * fanIn, Math.sqrt(2 / fanIn)), [fanOut, fanIn]);
    const b = g.initF32(`fc${i}.bias`, rng.normals(fanOut, 0.01), [fanOut]);
    const times = i === 1 ? Math.max(1, opts.repeat ?? 1) : 1;
    for (let r = 0; r < times; r++) {
      x = g.op('Gemm', [x, w, b], { transB: { i: 1 } });
      if (i < 2) x = g.op('Relu', [x]);
    }
  }
  g.output('probabilities', 'float32', ['batch', MLP_CLASSES], g.op('Softmax', [x], { axis: { i: -1 } }));
  return g;
}

/** Writes `dir/model.onnx` for an MLP of the given hidden width; returns the file path. */
export function writeMlp(dir: string, opts: MlpOptions): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'model.onnx');
  buildMlp(opts).write(file, `tsserve demo MLP 784-${opts.hidden}-${opts.hidden}-10, seed ${opts.seed}`);
  return file;
}
