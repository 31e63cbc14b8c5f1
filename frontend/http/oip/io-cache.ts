/**
 * A served model's inputs and outputs as the Open Inference Protocol names them: the IO read at
 * its registration (frontend/models/model-io.ts); a model never registered on its own (a
 * pipeline's stage) has its file read once here through the same reader. Null for a model whose
 * file is not ONNX or cannot be read.
 */
import * as path from 'path';
import { registeredModelIo } from '../../models/model-io.js';
import type { ServedModel } from '../../models/served-model.js';
import { readOnnxIo } from '../../store/onnx-io.js';
import type { ModelIo } from '../../store/onnx-io.js';
import { tensorSpecOf } from '../tensor-spec.js';
import type { TensorSpec } from '../tensor-spec.js';

const cache = new WeakMap<ServedModel, Promise<ModelIo | null>>();
const specs = new WeakMap<ServedModel, Promise<TensorSpec | null>>();
/** The specs whose promise has fulfilled, for a caller on every request that need not wait a microtask. */
const settledSpecs = new WeakMap<ServedModel, TensorSpec | null>();

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
    p.then(
      (spec) => settledSpecs.set(m, spec),
      () => undefined, // the caller of tensorSpecFor hears the rejection
    );
  }
  return p;
}

/**
 * What `tensorSpecFor` has resolved to for `m`, or undefined until it has (call that first):
 * the /predictions route reads it on every request, and once the spec is known a request need
 * not wait for a promise's microtask to start reading its body.
 */
export function settledTensorSpec(m: ServedModel): TensorSpec | null | undefined {
  return settledSpecs.get(m);
}

/** The model's IO: read at registration, else from the cache or read now. */
export function modelIoOf(m: ServedModel): Promise<ModelIo | null> {
  let p = cache.get(m);
  if (p === undefined) {
    const file = path.join(m.config.dir, m.config.modelFile);
    const atRegistration = registeredModelIo(m.config);
    if (atRegistration !== undefined) p = Promise.resolve(atRegistration);
    else p = file.endsWith('.onnx') ? ioOrNull(file, m.config.dir) : Promise.resolve(null);
    cache.set(m, p);
  }
  return p;
}

/** The file's IO, or null when it cannot be read as an ONNX model (its worker's load says why). */
async function ioOrNull(file: string, dir: string): Promise<ModelIo | null> {
  try {
    return await readOnnxIo(file, dir);
  } catch {
    return null;
  }
}
