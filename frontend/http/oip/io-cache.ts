/**
 * A served model's inputs and outputs as the Open Inference Protocol names them, read once per
 * model from its ONNX file (metadata answers and inference requests both need them); null for
 * a model whose file is not ONNX or cannot be read.
 */
import * as path from 'path';
import type { ServedModel } from '../../server/served-model.js';
import type { ModelIo } from './onnx-io.js';
import { readOnnxIo } from './onnx-io.js';

const cache = new WeakMap<ServedModel, Promise<ModelIo | null>>();

/** The model's IO, from the cache or read now. */
export function modelIoOf(m: ServedModel): Promise<ModelIo | null> {
  let p = cache.get(m);
  if (p === undefined) {
    const file = path.join(m.config.dir, m.config.modelFile);
    p = file.endsWith('.onnx') ? readOnnxIo(file).catch(() => null) : Promise.resolve(null);
    cache.set(m, p);
  }
  return p;
}
