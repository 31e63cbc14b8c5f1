/**
 * Turns a model-config `handler:` into a runnable handler: `onnx`, `image_classifier` and
 * `embedding` are built in, anything
 * else a module inside the model directory (ESM or CommonJS, loaded with `import()`). Whatever the module's export style, the
 * result is one of two shapes the batch runner knows: staged, or a single `handle`.
 */
import { pathToFileURL } from 'node:url';
import { createOnnxHandler } from '../handlers/onnx.js';
import { createImageClassifierHandler } from '../handlers/image-classifier.js';
import { createEmbeddingHandler } from '../handlers/embedding.js';
import type { HandleFunction, HandlerContext, HandlerModule, StagedHandler } from '../handlers/types.js';
import { resolveInModelDir } from './model-path.js';

/** A handler normalized for the batch runner. */
export type LoadedHandler =
  | { readonly kind: 'staged'; readonly source: string; readonly stages: StagedHandler }
  | {
      readonly kind: 'handle';
      readonly source: string;
      readonly init?: (ctx: HandlerContext) => unknown;
      readonly handle: HandleFunction;
    };

/** Extensions tried when `handler:` names a module without one. */
const MODULE_EXTENSIONS: readonly string[] = ['.js', '.mjs', '.cjs'];

/** Loads the handler for `spec`; throws an Error with a message fit for `tsserve.load_failed`. */
export async function loadHandler(modelDir: string, spec: string): Promise<LoadedHandler> {
  if (spec === 'onnx') return { kind: 'staged', source: 'built-in onnx', stages: createOnnxHandler() };
  if (spec === 'image_classifier')
    return { kind: 'staged', source: 'built-in image_classifier', stages: createImageClassifierHandler() };
  if (spec === 'embedding') return { kind: 'staged', source: 'built-in embedding', stages: createEmbeddingHandler() };
  const resolved = resolveInModelDir(modelDir, spec, MODULE_EXTENSIONS);
  if (!resolved.ok) throw new Error(`handler refused: ${resolved.error}`);
  let mod: unknown;
  try {
    mod = await import(pathToFileURL(resolved.file).href);
  } catch (e) {
    throw new Error(`handler ${resolved.file} failed to load: ${(e as Error).message ?? String(e)}`, { cause: e });
  }
  return normalize(mod, resolved.file);
}

function isStaged(x: unknown): x is StagedHandler {
  if ((typeof x !== 'object' && typeof x !== 'function') || x === null) return false;
  const o = x as Record<string, unknown>;
  return ['preprocess', 'inference', 'postprocess'].some((k) => typeof o[k] === 'function');
}

/** Accepts `handle`, a default function/object, a function module, or the stage functions. */
export function normalize(mod: unknown, source: string): LoadedHandler {
  if (typeof mod === 'function') return { kind: 'handle', source, handle: mod as HandleFunction };
  if (typeof mod !== 'object' || mod === null) throw new Error(`handler ${source} exports nothing usable`);
  const m = mod as HandlerModule;
  const init = typeof m.initialize === 'function' ? m.initialize.bind(m) : undefined;
  if (typeof m.handle === 'function') return { kind: 'handle', source, init, handle: m.handle.bind(m) };
  const d = m.default;
  if (isStaged(m)) return { kind: 'staged', source, stages: m };
  if (typeof d === 'function') return { kind: 'handle', source, init, handle: d };
  if (typeof d === 'object' && d !== null) {
    const dm = d as HandlerModule;
    if (typeof dm.handle === 'function') {
      const dinit = typeof dm.initialize === 'function' ? dm.initialize.bind(dm) : init;
      return { kind: 'handle', source, init: dinit, handle: dm.handle.bind(dm) };
    }
    if (isStaged(dm)) return { kind: 'staged', source, stages: dm };
  }
  throw new Error(`handler ${source} exports neither handle() nor preprocess/inference/postprocess`);
}
