/**
 * The model config of a model directory, whichever kind it is: its model-config.yaml
 * (model-config.ts); a Hugging Face export's files make one when it has none
 * (hf-model-dir.ts), and are the defaults of the one it has. The server's registration and the
 * offline CLI read a directory through this one function.
 */
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { ModelConfigOverrides, ModelConfigResult } from './model-config.js';
import { MODEL_CONFIG_FILE, loadModelConfig } from './model-config.js';
import { HF_CONFIG_FILE, hfModelConfig, readHfBase } from './hf-model-dir.js';

/** The config of model `name` in `dir` (a resolved directory inside the store `store`). */
export async function modelDirConfig(
  store: string,
  name: string,
  dir: string,
  overrides?: ModelConfigOverrides,
): Promise<ModelConfigResult> {
  if (!(await exists(dir, HF_CONFIG_FILE))) return loadModelConfig(name, dir, overrides);
  const hf = await readHfBase(store, dir);
  if (!hf.ok) return { ok: false, problems: hf.problems };
  return (await exists(dir, MODEL_CONFIG_FILE))
    ? loadModelConfig(name, dir, overrides, hf.base)
    : hfModelConfig(name, dir, hf.base, overrides);
}

/** Whether `dir/file` exists: a stat through libuv's pool, off the event loop (as isHfModelDir's, for registration). */
async function exists(dir: string, file: string): Promise<boolean> {
  try {
    await fsp.stat(path.join(dir, file));
    return true;
  } catch {
    return false;
  }
}
