/**
 * A seeded ResNet-style ImageNet classifier for bench:image and the image tests, generated here
 * (no download): float32 `input` [batch, 3, 224, 224] → ResNet-18's stem (7x7 stride-2
 * convolution, 64 channels, 3x3 stride-2 max pool) and its first three stages of two basic
 * blocks each (3x3 convolutions at 64, 128 and 256 channels, identity or 1x1 stride-2 shortcuts,
 * ReLU; batch norm folded away, as an exported model's is) → global average pool → `logits`
 * [batch, 1000]. About 1.4 G multiply-adds an image (ResNet-18 is 1.8 G) and 3.0 M weights
 * (12 MB): its inference costs what the CNNs TorchServe's `image_classifier` serves cost.
 * Random weights: its answers mean nothing; the labels are TorchServe's file format with
 * placeholder names (the npm package found that ships ImageNet's names,
 * @tensorflow-models/mobilenet, brings TensorFlow.js with it).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeModelConfig } from './model-config.js';
import { GraphBuilder } from './onnx-builder.js';
import { Prng } from './prng.js';

/** The classes of its output. */
export const RESNET_CLASSES = 1000;

/** Channels of the three stages (ResNet-18's first three). */
const STAGES = [64, 128, 256];

/** The label of class `i` in its index_to_name.json: TorchServe's `[wordnet id, name]` pairs. */
export function resnetLabel(i: number): string {
  return `class ${String(i).padStart(3, '0')}`;
}

/** Builds the graph (seed 24). */
function buildResnet(): GraphBuilder {
  const rng = new Prng(24);
  const g = new GraphBuilder('resnet-classifier');
  let n = 0;
  const conv = (x: string, cin: number, cout: number, k: number, stride: number, gain = 1): string => {
    const id = n++;
    const w = g.initF32(`conv${id}.weight`, rng.normals(cout * cin * k * k, gain * Math.sqrt(2 / (cin * k * k))), [
      cout,
      cin,
      k,
      k,
    ]);
    const b = g.initF32(`conv${id}.bias`, rng.normals(cout, 0.01), [cout]);
    const p = (k - 1) / 2;
    return g.op('Conv', [x, w, b], {
      kernel_shape: { ints: [k, k] },
      strides: { ints: [stride, stride] },
      pads: { ints: [p, p, p, p] },
    });
  };
  let x = g.input('input', 'float32', ['batch', 3, 224, 224]);
  x = g.op('Relu', [conv(x, 3, 64, 7, 2)]);
  x = g.op('MaxPool', [x], { kernel_shape: { ints: [3, 3] }, strides: { ints: [2, 2] }, pads: { ints: [1, 1, 1, 1] } });
  let cin = 64;
  for (const [s, cout] of STAGES.entries()) {
    for (let block = 0; block < 2; block++) {
      const stride = s > 0 && block === 0 ? 2 : 1;
      const shortcut = stride === 1 && cin === cout ? x : conv(x, cin, cout, 1, stride);
      // The residual branch's last convolution starts small, so activations stay bounded over the blocks.
      const y = conv(g.op('Relu', [conv(x, cin, cout, 3, stride)]), cout, cout, 3, 1, 0.5);
      x = g.op('Relu', [g.op('Add', [y, shortcut])]);
      cin = cout;
    }
  }
  const pooled = g.op('Flatten', [g.op('GlobalAveragePool', [x])], { axis: { i: 1 } });
  const fc = g.initF32('fc.weight', rng.normals(RESNET_CLASSES * cin, Math.sqrt(1 / cin)), [RESNET_CLASSES, cin]);
  const bias = g.initF32('fc.bias', rng.normals(RESNET_CLASSES, 0.01), [RESNET_CLASSES]);
  g.output('logits', 'float32', ['batch', RESNET_CLASSES], g.op('Gemm', [pooled, fc, bias], { transB: { i: 1 } }));
  return g;
}

/**
 * Writes `dir/model.onnx`, `dir/index_to_name.json` (1000 classes) and a model-config.yaml with
 * TorchServe's default preprocessing (resize 256, center crop 224, ImageNet mean/std, softmax,
 * top 5); returns the model file's path.
 */
export function writeResnetClassifier(dir: string, cfg: { batchSize: number; maxBatchDelay: number }): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'model.onnx');
  buildResnet().write(file, 'tsserve ResNet-style classifier, 3 stages, 1000 classes, seed 24');
  const labels = Object.fromEntries(
    Array.from({ length: RESNET_CLASSES }, (_, i) => [String(i), [`n${String(i).padStart(8, '0')}`, resnetLabel(i)]]),
  );
  writeFileSync(join(dir, 'index_to_name.json'), `${JSON.stringify(labels)}\n`);
  writeModelConfig(
    dir,
    {
      handler: 'image_classifier',
      model: 'model.onnx',
      batchSize: cfg.batchSize,
      maxBatchDelay: cfg.maxBatchDelay,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeout: 120,
      threads: 1,
    },
    'resnet-classifier: a seeded ResNet-style classifier behind image_classifier with TorchServe defaults.',
  );
  return file;
}
