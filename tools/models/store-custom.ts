/**
 * The `custom` demo model: the `mlp` network (same writer, same seed) behind the user-style
 * handler of tools/models/custom/handler.ts, COPIED into the model directory as `handler.mjs`
 * (an ES module wherever the store lives: `.mjs` needs no package.json to say so).
 * The copy is checked to be self-contained (only Node built-ins imported), so the store never
 * depends on this checkout's dist/ at run time.
 */
import { builtinModules } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MLP_HIDDEN, MLP_SEED, writeMlp } from './mlp.js';
import { writeModelConfig } from './model-config.js';
import type { ModelConfigFile } from './model-config.js';
import type { StoreModel } from './store-model.js';

/** The compiled handler next to this file (dist/tools/models/custom/handler.js). */
export const CUSTOM_HANDLER_BUILD = join(import.meta.dirname, 'custom', 'handler.js');

const BUILTINS: ReadonlySet<string> = new Set(builtinModules);

/** Every module a JS text loads: static `import … from 'x'` / `import 'x'`, `import('x')` and `require('x')`. */
export function requiredModules(js: string): string[] {
  const out: string[] = [];
  const forms = [
    /^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*(['"])([^'"]+)\1/gm,
    /^\s*import\s*(['"])([^'"]+)\1/gm,
    /\b(?:import|require)\(\s*(['"`])([^'"`]+)\1\s*\)/g,
  ];
  for (const re of forms) for (const m of js.matchAll(re)) out.push(m[2]!);
  return out;
}

/**
 * Turns the compiled handler into the file the store holds: no source-map comment (the map is
 * not copied), a header naming its source; throws if it imports anything but Node built-ins.
 */
export function storeHandlerText(compiled: string): string {
  const foreign = requiredModules(compiled).filter((m) => !BUILTINS.has(m.replace(/^node:/, '')));
  if (foreign.length > 0) {
    throw new Error(
      `custom handler must be self-contained, but it imports ${foreign.join(', ')}; get it from context instead`,
    );
  }
  const body = compiled.replace(/^\/\/# sourceMappingURL=.*$/m, '').trimEnd();
  return `// Generated from tools/models/custom/handler.ts by tools/models/store-custom.ts; edit the source.\n${body}\n`;
}

/** The custom model's model-config.yaml values (also shown in examples/custom-metrics/). */
export const CUSTOM_MODEL_CONFIG: ModelConfigFile = {
  handler: 'handler.mjs',
  model: 'model.onnx',
  batchSize: 8,
  maxBatchDelay: 5,
  minWorkers: 1,
  maxWorkers: 1,
  responseTimeout: 30,
  threads: 1,
};

/** The header comment of the custom model's model-config.yaml. */
export const CUSTOM_MODEL_COMMENT =
  'custom: the mlp network behind a user-style handler (handler.mjs) that records custom metrics.\n' +
  'Request body: a JSON array of 784 numbers; answer: {"class": N, "probabilities": [10 numbers]}.\n' +
  'Declare its metrics in metrics.yaml (model_metrics): see examples/custom-metrics/.';

/** Writes the custom model (model.onnx, handler.mjs, model-config.yaml) into `dir`. */
export function writeCustomModel(dir: string): void {
  writeMlp(dir, { hidden: MLP_HIDDEN, seed: MLP_SEED });
  writeFileSync(join(dir, 'handler.mjs'), storeHandlerText(readFileSync(CUSTOM_HANDLER_BUILD, 'utf8')));
  writeModelConfig(dir, CUSTOM_MODEL_CONFIG, CUSTOM_MODEL_COMMENT);
}

/** `custom` for the demo store list. */
export const CUSTOM_MODEL: StoreModel = {
  name: 'custom',
  summary: `MLP classifier 784-${MLP_HIDDEN}-${MLP_HIDDEN}-10 behind a custom handler.mjs with custom metrics`,
  write: writeCustomModel,
};
