/**
 * `model-config.yaml` → `ModelConfig`: parsed and validated once, when a model is registered,
 * with every problem reported at once (`<file>:<line>:<col>: <key>: <what is wrong>`).
 */
import { promises as fsp } from 'fs';
import * as path from 'path';
import { ModelFileError, excerpt, readModelText } from '../../schema/files/model-file.js';
import { didYouMean } from '../../schema/config/doc.js';
import { loadYaml, parseYaml } from '../../schema/config/yaml-source.js';
import type { YamlParse } from '../../schema/config/yaml-source.js';
import { validateEngineArgs } from '../../schema/engine-args.js';
import { checkEngineSettings, checkKvHoldsMaxModelLen, writtenNames } from '../../schema/engine-settings.js';
import { parsePipelineSpec } from '../../schema/pipeline-config.js';
import { parseImageClassifierOptions } from '../../schema/image/classifier-options.js';
import { parseEmbeddingOptions } from '../../schema/text/embedding-options.js';
import type { ModelConfig } from '../../schema/worker-protocol.js';
import type { IntBound } from './model-bounds.js';
import { MODEL_BOUNDS, boundText } from './model-bounds.js';
import { PathEscapeError, resolveInside } from './safe-path.js';
import { engineGraphProblems } from './engine-graph.js';
import type { HfBase } from '../../schema/hf-config.js';
import { padProblems, parseTensorSettings } from './tensor-settings.js';
import { readOnnxIo } from './onnx-io.js';

/** The file every model directory holds. */
export const MODEL_CONFIG_FILE = 'model-config.yaml';

/** Largest model-config.yaml read (bytes): a real one is well under 4 KiB; the bound keeps a 200 MB file from being parsed. */
export const MAX_MODEL_CONFIG_BYTES = 1024 * 1024;

/** Settings a registration may override (management API query parameters). */
export interface ModelConfigOverrides {
  readonly batchSize?: number;
  readonly maxBatchDelayMs?: number;
  readonly minWorkers?: number;
  readonly maxWorkers?: number;
  readonly responseTimeoutSec?: number;
}

/** A parsed model config, or every problem found in it. */
export type ModelConfigResult =
  | { readonly ok: true; readonly config: ModelConfig; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly problems: readonly string[] };

const KNOWN_KEYS = new Set([
  'handler',
  'model',
  'version',
  'batchSize',
  'maxBatchDelay',
  'minWorkers',
  'maxWorkers',
  'responseTimeout',
  'threads',
  'engine',
  'handlerOptions',
  'description',
  'pipeline',
  'tensors',
]);

/** Handlers the server provides itself (no module file in the model directory; all run ONNX files on onnxruntime). */
export const BUILT_IN_HANDLERS: ReadonlySet<string> = new Set([
  'onnx',
  'generate',
  'vocoder',
  'pipeline',
  'image_classifier',
  'embedding',
]);

interface IntRule {
  readonly key: keyof typeof MODEL_BOUNDS;
  readonly def: number;
}

/** A model's version when its model-config gives none (TorchServe's default). */
export const DEFAULT_MODEL_VERSION = '1.0';

/** Characters a version may use: it is a URL path segment, part of worker names and a label value. */
const VERSION_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const MAX_VERSION = 128;

/** A value of the file in a message: JSON, cut to a short escaped excerpt. */
function shown(v: unknown): string {
  if (typeof v === 'string') return excerpt(v);
  const json = JSON.stringify(v) as string | undefined;
  return json === undefined ? String(v) : json.length <= 80 ? json : excerpt(json);
}

/**
 * The `version:` key: a string such as "1.0" (default 1.0). A YAML number is refused rather
 * than guessed at: `version: 1.0` loads as the number 1, which would silently become "1".
 */
function modelVersion(v: unknown, bad: (msg: string) => void): string {
  if (v === undefined || v === null) return DEFAULT_MODEL_VERSION;
  if (typeof v === 'number') {
    bad(
      `must be a string: quote it, e.g. version: "1.0" (YAML reads an unquoted 1.0 as the number 1; got ${String(v)})`,
    );
    return DEFAULT_MODEL_VERSION;
  }
  if (typeof v !== 'string' || !VERSION_RE.test(v)) {
    bad(`must be a string of letters, digits, '.', '_' or '-' starting with a letter or digit (got ${shown(v)})`);
    return DEFAULT_MODEL_VERSION;
  }
  // A label value of the model's metrics and part of its workers' names, bounded as the model
  // name is (dimension values past 1,024 characters are dropped). 128, as a container image tag.
  if (v.length > MAX_VERSION) {
    bad(`is ${v.length} characters, at most ${MAX_VERSION}`);
    return DEFAULT_MODEL_VERSION;
  }
  return v;
}

/**
 * The `engine:` block validated (either spelling of each setting, see schema/engine-args.ts)
 * and returned under our names, so the worker and the frontend read one spelling. Each problem
 * is reported at its line and column: `<file>:<line>:<col>: engine.<key>: <what is wrong>`.
 * The rules between settings (schema/engine-settings.ts) run here too: the worker would refuse
 * the same block at every load, and a load that fails is retried with backoff forever.
 */
function engineArgs(
  block: Readonly<Record<string, unknown>> | undefined,
  generate: boolean,
  hasKey: boolean,
  file: string,
  parsed: YamlParse,
  problems: string[],
): Readonly<Record<string, unknown>> | undefined {
  if (block === undefined) return undefined;
  const r = validateEngineArgs(block, 'engine');
  const place = (path: readonly string[], kind: 'key' | 'value', message: string): void => {
    // No `engine:` key at all (a generate model's block is still checked): the file alone.
    const pos = !parsed.ok || !hasKey ? null : kind === 'value' ? parsed.locator.value(path) : parsed.locator.key(path);
    problems.push(pos === null ? `${file}: ${message}` : `${file}:${pos.line}:${pos.col}: ${message}`);
  };
  for (const p of r.problems) place(['engine', p.key], p.kind === 'value' ? 'value' : 'key', p.message);
  // Only the generation worker runs an engine from the block.
  const written = writtenNames(block);
  const between = generate ? checkEngineSettings(r.args, written) : [];
  // The budget depends on every size key: one with a bad value would skew it.
  const kv = generate && r.problems.length === 0 ? checkKvHoldsMaxModelLen(r.args, written) : null;
  if (kv !== null) between.push(kv);
  // A missing setting is placed at the `engine:` key, a present one at its value.
  for (const p of between)
    place(p.absent ? ['engine'] : ['engine', written.get(p.name)!], p.absent ? 'key' : 'value', p.message);
  return r.problems.length === 0 && between.length === 0 ? r.args : undefined;
}

/** `pipeline.stages[1].model` → ['pipeline', 'stages', 1, 'model'] (an empty segment is dropped). */
function docPathOf(dotted: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const part of dotted.split('.')) {
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part);
    if (m === null) return [];
    if (m[1] !== '') out.push(m[1]!);
    for (const idx of m[2]!.matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

/**
 * Reads and validates `<dir>/model-config.yaml` for model `name`. `dir` must already be a
 * resolved directory inside the store; the handler module and model file must stay inside it.
 */
export async function loadModelConfig(
  name: string,
  dir: string,
  overrides: ModelConfigOverrides = {},
  /** A Hugging Face directory's defaults (hf-model-dir.ts): handler, model file and engine keys the file leaves out. */
  hf?: HfBase,
  /** False for a pipeline's stage: its own stages (a misconfigured store) are not followed. */
  withStages = true,
): Promise<ModelConfigResult> {
  const file = path.join(dir, MODEL_CONFIG_FILE);
  let raw: unknown;
  let text: string;
  try {
    // Read as a request is: inside the model directory after links, a regular file (a FIFO or
    // /dev/zero is refused, not waited on or read), bounded, off the event loop.
    text = await readModelText(dir, MODEL_CONFIG_FILE, MAX_MODEL_CONFIG_BYTES);
  } catch (e) {
    if (!(e instanceof ModelFileError)) return { ok: false, problems: [`${file}: cannot be read`] };
    const msg = e.problem === 'missing' ? 'file not found' : e.message.slice(e.file.length + 2);
    return { ok: false, problems: [`${file}: ${msg}`] };
  }
  // Parsed with positions first: a syntax error, and an alias bomb (nested anchors that expand
  // into billions of nodes, which the plain load would build and then choke on), at their place.
  const located = parseYaml(text);
  if (!located.ok)
    return { ok: false, problems: [`${file}:${located.pos.line}:${located.pos.col}: ${located.reason}`] };
  try {
    raw = loadYaml(text);
  } catch (e) {
    return { ok: false, problems: [`${file}: ${(e as Error).message.split('\n')[0]}`] };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, problems: [`${file}: expected a mapping of settings (handler, model, batchSize, ...)`] };
  }
  const doc = raw as Record<string, unknown>;
  const problems: string[] = [];
  const warnings: string[] = [];
  // Each problem at the line and column of the key's value (of the key itself for an unknown
  // key); a key the file does not have (a required one, a default) has only the file.
  const at = (key: string, where: 'key' | 'value'): string => {
    if (!Object.hasOwn(doc, key)) return file;
    const pos = where === 'key' ? located.locator.key([key]) : located.locator.value([key]);
    return `${file}:${pos.line}:${pos.col}`;
  };
  const bad = (key: string, msg: string): void => {
    problems.push(`${at(key, 'value')}: ${key}: ${msg}`);
  };
  // A nested problem (`pipeline.stages[1].replicas: …`) at the position its path names.
  const atPath = (problem: string): string => {
    const path = docPathOf(problem.slice(0, problem.indexOf(':')));
    if (!located.ok || path.length === 0 || !Object.hasOwn(doc, path[0] as string)) return file;
    const pos = problem.includes(': unknown key') ? located.locator.key(path) : located.locator.value(path);
    return `${file}:${pos.line}:${pos.col}`;
  };
  for (const key of Object.keys(doc)) {
    if (KNOWN_KEYS.has(key)) continue;
    const guess = didYouMean(key, [...KNOWN_KEYS]);
    warnings.push(
      `${at(key, 'key')}: ${key}: unknown key ignored${guess !== null ? `; did you mean "${guess}"?` : ''}`,
    );
  }

  const handler = doc.handler ?? (hf !== undefined ? 'generate' : undefined);
  if (typeof handler !== 'string' || handler.trim() === '')
    bad('handler', "required: 'onnx', 'generate' or a path to a handler module");
  const model = doc.model ?? hf?.modelFile ?? '';
  if (typeof model !== 'string') bad('model', 'must be a file name relative to the model directory');
  const version = modelVersion(doc.version, (msg) => bad('version', msg));

  const int = (r: IntRule): number => {
    const v = doc[r.key];
    if (v === undefined || v === null) return r.def;
    const b: IntBound = MODEL_BOUNDS[r.key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < b.min || v > b.max) {
      bad(r.key, `must be ${boundText(b)} (got ${shown(v)})`);
      return r.def;
    }
    return v;
  };
  // Overrides come from the management API, which checked them against the same MODEL_BOUNDS.
  const batchSize = overrides.batchSize ?? int({ key: 'batchSize', def: 1 });
  const maxBatchDelayMs = overrides.maxBatchDelayMs ?? int({ key: 'maxBatchDelay', def: 100 });
  const minWorkers = overrides.minWorkers ?? int({ key: 'minWorkers', def: 1 });
  const maxWorkers = overrides.maxWorkers ?? int({ key: 'maxWorkers', def: Math.max(1, minWorkers) });
  const responseTimeoutSec = overrides.responseTimeoutSec ?? int({ key: 'responseTimeout', def: 120 });
  const threads = int({ key: 'threads', def: 1 });
  if (maxWorkers < minWorkers) bad('maxWorkers', `must be >= minWorkers (${maxWorkers} < ${minWorkers})`);
  if (batchSize < 1) bad('batchSize', 'must be >= 1');

  const objectOrUndef = (key: string): Readonly<Record<string, unknown>> | undefined => {
    const v = doc[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'object' || Array.isArray(v)) {
      bad(key, 'must be a mapping');
      return undefined;
    }
    return v as Record<string, unknown>;
  };
  const ownBlock = objectOrUndef('engine');
  // A Hugging Face directory's engine keys lie under the file's own (either spelling of a key wins).
  const own = writtenNames(ownBlock ?? {});
  const engineBlock =
    hf !== undefined && handler === 'generate'
      ? { ...Object.fromEntries(Object.entries(hf.engine).filter(([k]) => !own.has(k))), ...ownBlock }
      : ownBlock;
  // The generation worker reads the model's dims and special ids from the block.
  const noBlock = (doc.engine === undefined || doc.engine === null) && engineBlock === undefined;
  const engine = engineArgs(
    engineBlock ?? (handler === 'generate' && noBlock ? {} : undefined),
    handler === 'generate',
    !noBlock,
    file,
    located,
    problems,
  );
  const handlerOptions = objectOrUndef('handlerOptions');
  const tensorProblems: string[] = [];
  const tensors = parseTensorSettings(doc.tensors, tensorProblems);
  for (const p of tensorProblems) problems.push(`${atPath(p)}: ${p}`);

  // Files the worker will open must exist and stay inside the model directory; the handler
  // module and a built-in handler's model file must be regular files (a FIFO would hang the load).
  const inside = async (key: string, rel: string, regular: boolean): Promise<string | null> => {
    let p: string;
    try {
      p = resolveInside(dir, rel);
    } catch (e) {
      bad(key, e instanceof PathEscapeError ? e.message : String(e));
      return null;
    }
    const st = await fsp.stat(p).catch(() => null);
    if (st === null) bad(key, `file '${rel}' not found in ${dir}`);
    else if (regular && !st.isFile()) bad(key, `'${rel}' is not a regular file (${fileKind(st)})`);
    else return p;
    return null;
  };
  if (typeof handler === 'string' && !BUILT_IN_HANDLERS.has(handler) && handler.trim() !== '')
    await inside('handler', handler, true);
  const hasModel = typeof model === 'string' && model !== '';
  const builtIn = typeof handler === 'string' && BUILT_IN_HANDLERS.has(handler);
  const modelPath = hasModel ? await inside('model', model, builtIn) : null;
  if (!hasModel && ['onnx', 'generate', 'vocoder', 'image_classifier', 'embedding'].includes(String(handler)))
    bad('model', `required for handler '${String(handler)}'`);
  // The built-in image and embedding handlers' options are checked here, at registration.
  const optionProblems: string[] = [];
  if (handler === 'image_classifier') parseImageClassifierOptions(handlerOptions, optionProblems);
  if (handler === 'embedding') parseEmbeddingOptions(handlerOptions, optionProblems);
  for (const p of optionProblems) problems.push(`${at('handlerOptions', 'value')}: ${p}`);
  // What the graph must offer the engine settings (its layout, num_logits for drafts).
  if (handler === 'generate' && engine !== undefined && engineBlock !== undefined && modelPath !== null) {
    for (const g of await engineGraphProblems(engine, writtenNames(engineBlock), modelPath, dir)) {
      const pos = located.locator.value(g.at);
      problems.push(`${file}:${pos.line}:${pos.col}: ${g.message}`);
    }
  }
  // A pad rule the graph cannot follow: the worker would refuse it at every load, retried forever.
  if (handler === 'onnx' && tensors?.pad !== undefined && modelPath !== null && modelPath.endsWith('.onnx')) {
    try {
      for (const p of padProblems(tensors.pad, await readOnnxIo(modelPath))) problems.push(`${atPath(p)}: ${p}`);
    } catch {
      // An unreadable graph is the worker's load error to name.
    }
  }
  // A pipeline's stages are other models of the store: the pipeline kind loads their configs.
  const pipelineProblems: string[] = [];
  const spec = handler === 'pipeline' ? parsePipelineSpec(doc.pipeline, pipelineProblems) : undefined;
  for (const p of pipelineProblems) problems.push(`${atPath(p)}: ${p}`);
  // The stages' configs are read here, off the event loop, for the pipeline model to build on
  // (sibling directories of the store; a stage's own stages are not followed).
  const pipeline =
    spec === undefined || problems.length > 0 || !withStages
      ? spec
      : {
          ...spec,
          stageConfigs: await Promise.all(
            spec.stages.map((st) =>
              loadModelConfig(name, path.join(path.dirname(dir), st.model), {}, undefined, false),
            ),
          ),
        };

  if (problems.length > 0) return { ok: false, problems: inFileOrder(file, problems) };
  const config: ModelConfig = Object.freeze({
    name,
    version,
    dir,
    handler: String(handler),
    modelFile: String(model),
    batchSize,
    maxBatchDelayMs,
    minWorkers,
    maxWorkers,
    responseTimeoutSec,
    threads,
    ...(engine !== undefined ? { engine } : {}),
    ...(handlerOptions !== undefined ? { handlerOptions } : {}),
    ...(hf !== undefined && handler === 'generate' ? { samplingDefaults: hf.samplingDefaults } : {}),
    ...(tensors !== undefined ? { tensors } : {}),
    ...(pipeline !== undefined ? { pipeline } : {}),
  });
  return { ok: true, config, warnings };
}

/** What a file that is not regular is, for the message. */
function fileKind(st: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'a device';
}

/**
 * Problems in the order of the file (line, then column), as an editor lists them; a problem
 * without a position (`FILE: …`) goes first. The checks run key by key, not line by line.
 */
function inFileOrder(file: string, problems: readonly string[]): string[] {
  const posOf = (p: string): [number, number] => {
    const m = /^:(\d+):(\d+):/.exec(p.slice(file.length));
    return m === null ? [0, 0] : [Number(m[1]), Number(m[2])];
  };
  return problems
    .map((p, i) => ({ p, i, pos: posOf(p) }))
    .sort((a, b) => a.pos[0] - b.pos[0] || a.pos[1] - b.pos[1] || a.i - b.i)
    .map((x) => x.p);
}
