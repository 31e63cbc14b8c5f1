/**
 * A seeded ImageNet-shaped classifier for bench:image: float32 `input` [batch, 3, 224, 224] →
 * four 3x3 stride-2 convolutions (32, 64, 128, 256 channels, ReLU) → global average pool →
 * `logits` [batch, 1000]; about 0.37 GFLOP an image, so its inference costs what a small
 * ResNet's does rather than the PaddleOCR classifier's ~1.4 ms. Random weights: its answers mean
 * nothing; the bench measures the serving around it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeModelConfig } from './model-config.js';
import { GraphBuilder } from './onnx-builder.js';
import { Prng } from './prng.js';

/** The channels of its four convolutions. */
const CHANNELS = [3, 32, 64, 128, 256];

/** Writes `dir/model.onnx` and a model-config.yaml with TorchServe's default preprocessing. */
export function writeConvClassifier(dir: string, cfg: { batchSize: number; maxBatchDelay: number }): void {
  mkdirSync(dir, { recursive: true });
  const rng = new Prng(11);
  const g = new GraphBuilder('conv-classifier');
  let x = g.input('input', 'float32', ['batch', 3, 224, 224]);
  for (let i = 0; i + 1 < CHANNELS.length; i++) {
    const [cin, cout] = [CHANNELS[i]!, CHANNELS[i + 1]!];
    const w = g.initF32(`conv${i}.weight`, rng.normals(cout * cin * 9, Math.sqrt(2 / (cin * 9))), [cout, cin, 3, 3]);
    const b = g.initF32(`conv${i}.bias`, rng.normals(cout, 0.01), [cout]);
    x = g.op('Relu', [
      g.op('Conv', [x, w, b], {
        kernel_shape: { ints: [3, 3] },
        strides: { ints: [2, 2] },
        pads: { ints: [1, 1, 1, 1] },
      }),
    ]);
  }
  const pooled = g.op('Flatten', [g.op('GlobalAveragePool', [x])], { axis: { i: 1 } });
  const fc = g.initF32('fc.weight', rng.normals(1000 * 256, Math.sqrt(1 / 256)), [1000, 256]);
  g.output('logits', 'float32', ['batch', 1000], g.op('Gemm', [pooled, fc], { transB: { i: 1 } }));
  g.write(join(dir, 'model.onnx'), 'tsserve bench conv classifier, seed 11');
  writeModelConfig(
    dir,
    {
      handler: 'image_classifier',
      model: 'model.onnx',
      batchSize: cfg.batchSize,
      maxBatchDelay: cfg.maxBatchDelay,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeout: 60,
      threads: 1,
    },
    'conv-classifier: a seeded 4-conv classifier behind image_classifier with TorchServe defaults (bench:image).',
  );
}
