/**
 * A Hugging Face model directory (`config.json`, `tokenizer.json`, `generation_config.json` and
 * `tokenizer_config.json` when present, an ONNX export) as a generation model with no
 * model-config.yaml, as `vllm serve DIR` takes one. Every file is read as a request is
 * (schema/files/model-file.ts: inside the store after links, regular, bounded, off the event
 * loop; the ONNX file's inputs and outputs through onnx-io.ts, its weights unread); the
 * settings come from schema/hf-config.ts; every problem is listed at once, naming its file and
 * key. With a model-config.yaml beside them, these are the defaults it overrides.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ModelFileError, excerpt, readModelText, resolveModelFile } from '../../schema/files/model-file.js';
import { hfSettings } from '../../schema/hf-config.js';
import type { HfBase, HfFiles } from '../../schema/hf-config.js';
import { validateEngineArgs } from '../../schema/engine-args.js';
import { checkEngineSettings, checkKvHoldsMaxModelLen, writtenNames } from '../../schema/engine-settings.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import { DEFAULT_MODEL_VERSION } from './model-config.js';
import type { ModelConfigOverrides, ModelConfigResult } from './model-config.js';
import type { ModelIo } from './onnx-io.js';
import { readOnnxIo } from './onnx-io.js';

/** The file that makes a directory a Hugging Face model. */
export const HF_CONFIG_FILE = 'config.json';

/** Bound of each JSON config file (real ones are a few KB; a tokenizer.json is the tokenizer's). */
export const HF_CONFIG_BYTES = 1024 * 1024;

/** Where an export's ONNX file may be, in the order looked for (Optimum's names included). */
export const HF_ONNX_FILES: readonly string[] = [
  'model.onnx',
  'onnx/model.onnx',
  'decoder_model_merged.onnx',
  'onnx/decoder_model_merged.onnx',
  'decoder_with_past_model.onnx',
  'onnx/decoder_with_past_model.onnx',
];

/** The base, or every problem found (each naming its file and key). */
export type HfBaseResult =
  { readonly ok: true; readonly base: HfBase } | { readonly ok: false; readonly problems: string[] };

/** True when `dir` holds a config.json (a stat, no read): it is served as a Hugging Face directory. */
export function isHfModelDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, HF_CONFIG_FILE));
}

/** Reads and parses one JSON file of the directory; `{}` when optional and absent. */
async function jsonFile(
  store: string,
  dir: string,
  file: string,
  optional: boolean,
  problems: string[],
): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readModelText(store, path.join(dir, file), HF_CONFIG_BYTES);
  } catch (e) {
    if (e instanceof ModelFileError) {
      if (!(optional && e.problem === 'missing'))
        problems.push(`${file}: ${e.message.slice(e.message.indexOf(':') + 2)}`);
      return {};
    }
    throw e;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    problems.push(`${file}: not valid JSON (it begins ${excerpt(text, 40)})`);
    return {};
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    problems.push(`${file}: expected a JSON object (it begins ${excerpt(text, 40)})`);
    return {};
  }
  return v as Record<string, unknown>;
}

/** The first ONNX file of HF_ONNX_FILES the directory holds (inside the store), or a problem. */
async function onnxFileOf(store: string, dir: string, problems: string[]): Promise<string | null> {
  const refused: string[] = [];
  for (const rel of HF_ONNX_FILES) {
    try {
      await resolveModelFile(store, path.join(dir, rel));
      return rel;
    } catch (e) {
      if (!(e instanceof ModelFileError)) throw e;
      if (e.problem !== 'missing') refused.push(`${rel}: ${e.message.slice(e.message.indexOf(':') + 2)}`);
    }
  }
  problems.push(
    refused.length > 0 ? refused.join('; ') : `no ONNX export: none of ${HF_ONNX_FILES.join(', ')} is in the directory`,
  );
  return null;
}

/** Reads the Hugging Face files of `dir` (a resolved directory inside `store`). */
export async function readHfBase(store: string, dir: string): Promise<HfBaseResult> {
  const problems: string[] = [];
  const files: HfFiles = {
    config: await jsonFile(store, dir, HF_CONFIG_FILE, false, problems),
    generationConfig: await jsonFile(store, dir, 'generation_config.json', true, problems),
    tokenizerConfig: await jsonFile(store, dir, 'tokenizer_config.json', true, problems),
  };
  // The tokenizer itself is loaded by the tokenizer's reader; here it must be a readable file.
  try {
    await resolveModelFile(store, path.join(dir, 'tokenizer.json'));
  } catch (e) {
    if (!(e instanceof ModelFileError)) throw e;
    problems.push(`tokenizer.json: ${e.message.slice(e.message.indexOf(':') + 2)}`);
  }
  const modelFile = await onnxFileOf(store, dir, problems);
  let inputs: ModelIo['inputs'] = [];
  let outputs: ModelIo['outputs'] = [];
  if (modelFile !== null) {
    try {
      ({ inputs, outputs } = await readOnnxIo(path.join(dir, modelFile), store));
    } catch (e) {
      problems.push(`${modelFile}: not a readable ONNX model (${(e as Error).message.split('\n')[0]!.slice(0, 80)})`);
    }
  }
  // Every setting comes from config.json: unread, its keys would all be listed as missing.
  if (problems.some((p) => p.startsWith(`${HF_CONFIG_FILE}:`))) return { ok: false, problems };
  const canCheckGraph = modelFile !== null && inputs.length > 0;
  const s = hfSettings(files, inputs, outputs, modelFile ?? 'model.onnx');
  for (const p of s.problems) if (canCheckGraph || !p.startsWith(`${modelFile ?? 'model.onnx'}:`)) problems.push(p);
  if (problems.length > 0 || modelFile === null) return { ok: false, problems };
  return { ok: true, base: { engine: s.engine, modelFile, samplingDefaults: s.samplingDefaults } };
}

/** Model-config defaults a directory without model-config.yaml gets (a model-config.yaml's own). */
const DEFAULTS = { batchSize: 1, maxBatchDelayMs: 100, minWorkers: 1, responseTimeoutSec: 120, threads: 1 };

/**
 * The ModelConfig of a Hugging Face directory with no model-config.yaml: `handler: generate` on
 * the export found, the engine block of its files (checked as a model-config's would be).
 */
export function hfModelConfig(
  name: string,
  dir: string,
  base: HfBase,
  overrides: ModelConfigOverrides = {},
): ModelConfigResult {
  const checked = validateEngineArgs(base.engine, 'engine');
  const problems = checked.problems.map((p) => `${HF_CONFIG_FILE}: ${p.message}`);
  const written = writtenNames(base.engine);
  for (const p of checkEngineSettings(checked.args, written)) problems.push(`${HF_CONFIG_FILE}: ${p.message}`);
  if (problems.length === 0) {
    const kv = checkKvHoldsMaxModelLen(checked.args, written);
    // max_model_len is max_position_embeddings here: say where it came from and how to lower it.
    if (kv !== null)
      problems.push(
        `${HF_CONFIG_FILE}: max_position_embeddings ${String(base.engine.maxModelLen)}: ${kv.message} (a model-config.yaml beside config.json may set engine.max_model_len)`,
      );
  }
  if (problems.length > 0) return { ok: false, problems };
  const minWorkers = overrides.minWorkers ?? DEFAULTS.minWorkers;
  const config: ModelConfig = Object.freeze({
    name,
    version: DEFAULT_MODEL_VERSION,
    dir,
    handler: 'generate',
    modelFile: base.modelFile,
    batchSize: overrides.batchSize ?? DEFAULTS.batchSize,
    maxBatchDelayMs: overrides.maxBatchDelayMs ?? DEFAULTS.maxBatchDelayMs,
    minWorkers,
    maxWorkers: overrides.maxWorkers ?? Math.max(1, minWorkers),
    responseTimeoutSec: overrides.responseTimeoutSec ?? DEFAULTS.responseTimeoutSec,
    threads: DEFAULTS.threads,
    engine: checked.args,
    samplingDefaults: base.samplingDefaults,
  });
  return { ok: true, config, warnings: [] };
}
