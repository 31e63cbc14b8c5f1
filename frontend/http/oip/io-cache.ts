/**
 * A served model's inputs and outputs as the Open Inference Protocol names them, read once per
 * model from its ONNX file (metadata answers and inference requests both need them); null for
 * a model whose file is not ONNX or cannot be read.
 */
import * as path from 'path';
import type { ServedModel } from '../../models/served-model.js';
import { readOnnxIo } from '../../store/onnx-io.js';
import type { ModelIo } from '../../store/onnx-io.js';
import { tensorSpecOf } from '../tensor-spec.js';
import type { TensorSpec } from '../tensor-spec.js';

const cache = new WeakMap<ServedModel, Promise<ModelIo | null>>();
const specs = new WeakMap<ServedModel, Promise<TensorSpec | null>>();

/**
 * What a built-in `onnx` model's graph takes, from its IO (null for any other model, and for a
 * graph the frontend cannot read or whose inputs the handler cannot feed: its worker's load
 * then says why).
 */
export function tensorSpecFor(m: ServedModel): Promise<TensorSpec | null> {
  let p = specs.get(m);
  if (p === undefined) {
    p =
      m.config.handler !== 'onnx'
        ? Promise.resolve(null)
        : modelIoOf(m).then((io) => (io === null ? null : tensorSpecOf(m.config, io)));
    specs.set(m, p);
  }
  return p;
}

/** The model's IO, from the cache or read now. */
export function modelIoOf(m: ServedModel): Promise<ModelIo | null> {
  let p = cache.get(m);
  if (p === undefined) {
    const file = path.join(m.config.dir, m.config.modelFile);
    p = Promise.resolve(file.endsWith('.onnx') ? ioOrNull(file) : null);
    cache.set(m, p);
  }
  return p;
}

/** The file's IO, or null when it cannot be read as an ONNX model (its worker's load says why). */
function ioOrNull(file: string): ModelIo | null {
  try {
    return readOnnxIo(file);
  } catch {
    return null;
  }
}
