/**
 * What a generation model's graph must offer its engine settings, checked from the ONNX file
 * before a worker starts: its KV layout can be told (under `layout: auto`), it has the inputs
 * that layout's runner feeds for numLayers layers, and it verifies speculative drafts when
 * `speculative_config` is on. The engine refuses both at load, and a
 * load that fails is retried with backoff forever; the rule is the engine's (schema/kv-layout.ts).
 */
import * as path from 'node:path';
import { LAYOUT_INPUTS, kvLayoutOf, missingInputs, verifiesDrafts } from '../../schema/kv-layout.js';
import type { KvLayout } from '../../schema/kv-layout.js';
import { readOnnxIo } from './onnx-io.js';

/** One problem: the model-config key it is placed at (`model`, or an engine setting as written) and the line. */
export interface EngineGraphProblem {
  readonly at: readonly string[];
  readonly message: string;
}

/**
 * Problems between the validated engine settings (`args`, our names; `written` maps our names to
 * the keys as written) and the graph of `modelPath`. None when the file is not a readable ONNX
 * model: the worker's load then says what is wrong with it.
 */
export async function engineGraphProblems(
  args: Readonly<Record<string, unknown>>,
  written: ReadonlyMap<string, string>,
  modelPath: string,
  dir = path.dirname(modelPath),
): Promise<EngineGraphProblem[]> {
  let inputs: string[];
  try {
    inputs = (await readOnnxIo(modelPath, dir)).inputs.map((i) => i.name);
  } catch {
    return [];
  }
  const file = path.basename(modelPath);
  const configured = (args.layout as KvLayout | 'auto' | undefined) ?? 'auto';
  const layout = kvLayoutOf(configured, inputs);
  if (layout === null) {
    return [
      {
        at: ['model'],
        message: `model: cannot tell the KV layout of ${file}: it has neither ${LAYOUT_INPUTS.fast} (the fast layout) nor ${LAYOUT_INPUTS.hf} (the usual exported layout) among its inputs (${inputs.join(', ')})`,
      },
    ];
  }
  // The runner feeds every layer's past K/V: a wrong num_layers (or layout) misses some.
  const missing = missingInputs(layout, args.numLayers as number, inputs);
  if (missing.length > 0) {
    const by = configured === 'auto' ? 'its inputs show' : `engine.${written.get('layout') ?? 'layout'} names`;
    return [
      {
        at: ['model'],
        message: `model: ${file} lacks inputs of the ${layout} layout (which ${by}) for ${written.get('numLayers') ?? 'numLayers'} ${String(args.numLayers)}: ${missing.join(', ')}`,
      },
    ];
  }
  // layout: hf as written is refused with the settings (schema/engine-settings.ts).
  if (args.speculativeConfig !== undefined && configured !== 'hf' && !verifiesDrafts(layout, inputs)) {
    const key = written.get('speculativeConfig') ?? 'speculativeConfig';
    const why =
      layout === 'hf'
        ? `${file} is in the usual exported layout (it takes ${LAYOUT_INPUTS.hf})`
        : `${file} has no ${LAYOUT_INPUTS.numLogits} input`;
    return [
      {
        at: ['engine', key],
        message: `engine.${key}: n-gram speculative decoding needs logits for several positions, and ${why}; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)`,
      },
    ];
  }
  return [];
}
