/**
 * A model's graph inputs and outputs, read once at registration (model-manager.ts) from its ONNX
 * file through the one reader (frontend/store/onnx-io.ts: inside the store, regular file, weights
 * skipped, off the event loop), so the Open Inference Protocol's metadata and the built-in
 * handlers' request checks are ready at the first request, and a graph the frontend cannot read
 * fails the load of a built-in tensor handler with the reason instead of a worker's load error.
 */
import * as path from 'path';
import { excerpt } from '../../schema/files/model-file.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { readOnnxIo } from '../store/onnx-io.js';
import type { ModelIo } from '../store/onnx-io.js';

/** Handlers whose frontend reads the graph's IO to check and shape requests: an unreadable graph fails their load. */
const GRAPH_HANDLERS: ReadonlySet<string> = new Set(['onnx', 'image_classifier', 'embedding']);

/** The IO read at registration, by the registered config (its identity is the model's for its lifetime). */
const registered = new WeakMap<ModelConfig, ModelIo | null>();

/** The IO of `config`'s model file, or why the load is refused. Null IO: not ONNX, or a handler that reads its own file. */
export async function readModelIo(config: ModelConfig): Promise<{ io: ModelIo | null } | { problem: string }> {
  if (!config.modelFile.endsWith('.onnx')) return { io: null };
  try {
    return { io: await readOnnxIo(path.join(config.dir, config.modelFile), config.dir) };
  } catch (e) {
    // Another handler's worker reads the file its own way (a generation graph is checked by engine-graph.ts).
    if (!GRAPH_HANDLERS.has(config.handler)) return { io: null };
    const why = excerpt((e as Error).message.split('\n')[0] ?? '', 120);
    return { problem: `model: '${config.modelFile}' is not a readable ONNX graph (${why})` };
  }
}

/** Keeps the IO read at registration for `modelIoOf`. */
export function rememberModelIo(config: ModelConfig, io: ModelIo | null): void {
  registered.set(config, io);
}

/** The IO read at registration; undefined for a config that was never registered (a pipeline's stage). */
export function registeredModelIo(config: ModelConfig): ModelIo | null | undefined {
  return registered.get(config);
}
