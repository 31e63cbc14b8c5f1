/**
 * Builds an EngineCore for a model directory: resolves the engine settings, opens the ONNX
 * session, picks the runner from the graph's inputs (fast or usual layout) and sizes the pool.
 */
import { join } from 'node:path';
import { readModelText } from '../../schema/files/model-file.js';
import { loadYaml } from '../../schema/config/yaml-source.js';
import { createSession } from '../onnx/ort.js';
import { resolveEngineConfig } from './config.js';
import type { EngineConfig, KvLayout } from './config.js';
import { kvLayoutOf } from '../../schema/kv-layout.js';
import { EngineCore } from './engine-core.js';
import { FastRunner } from './fast-runner.js';
import { HfRunner } from './hf-runner.js';
import { KvStore } from './kv-store.js';
import type { KvArray } from './kv-store.js';
import type { ModelRunner } from './runner.js';
import { ModelTokenizer } from '../../schema/text/model-tokenizer.js';
import { readTokenizerFiles } from '../../schema/text/tokenizer-files.js';
import { ByteTokenizer } from './tokenizer.js';
import type { EngineTokenizer } from './tokenizer.js';

/** Where the model is and how to run it. */
export interface EngineLoadOptions {
  /** Model directory. */
  readonly dir: string;
  /** Model file relative to `dir`. */
  readonly modelFile: string;
  /** The `engine:` block of model-config.yaml. */
  readonly engine: Readonly<Record<string, unknown>>;
  /** onnxruntime threads when the engine block sets none (model-config's top-level `threads`). */
  readonly threads?: number;
  /** Settings that win over the block (tests, benches, CLI flags). */
  readonly overrides?: Readonly<Record<string, unknown>>;
}

/** Opens the model and returns a ready engine (its runner owns the session). */
export async function loadEngine(opts: EngineLoadOptions): Promise<EngineCore> {
  const base =
    opts.threads !== undefined && opts.engine.threads === undefined
      ? { ...opts.engine, threads: opts.threads }
      : opts.engine;
  const cfg = resolveEngineConfig(base, opts.overrides);
  // Before the session: a bad tokenizer file is a load error that opens nothing.
  const tokenizer = await engineTokenizerFor(opts.dir, cfg);
  const session = await createSession(join(opts.dir, opts.modelFile), { threads: cfg.threads });
  // The frontend's model-config check applied the same rule to the file (schema/kv-layout.ts).
  const layout: KvLayout | null = kvLayoutOf(cfg.layout, session.inputNames);
  if (layout === null) {
    await session.release();
    throw new Error(`cannot tell the KV layout of ${opts.modelFile}: inputs are ${session.inputNames.join(', ')}`);
  }
  // The block pool is the KV memory (sized by numBlocks or kvCacheBytes) and every full block
  // holds its real K/V, caching or not; rows are the per-step working copy. Writing a block costs
  // one copy when it fills, so this is kept even though only prefix hits read blocks back.
  // An fp16 export's K/V are kept as they come (half floats), in the rows and in the blocks.
  const half = layout === 'hf' && session.valueTypes['past_key_values.0.key'] === 'float16';
  let runner: ModelRunner;
  try {
    runner =
      layout === 'fast'
        ? new FastRunner(session, cfg.model, new KvStore(cfg.model, cfg.numBlocks, cfg.blockSize), {
            rowGrowStep: cfg.rowGrowStep,
            maxModelLen: cfg.maxModelLen,
            numRowTokens: cfg.numRowTokens,
          })
        : new HfRunner(
            session,
            cfg.model,
            half
              ? new KvStore<KvArray>(cfg.model, cfg.numBlocks, cfg.blockSize, (n) => new Uint16Array(n))
              : new KvStore<KvArray>(cfg.model, cfg.numBlocks, cfg.blockSize),
          );
  } catch (err) {
    await session.release();
    throw err;
  }
  try {
    return new EngineCore({ ...cfg, layout }, runner, tokenizer);
  } catch (err) {
    await runner.close();
    throw err;
  }
}

/** The byte tokenizer for a model's special ids. */
export function tokenizerFor(cfg: EngineConfig): ByteTokenizer {
  return new ByteTokenizer({
    bosId: cfg.model.bosId,
    eosId: cfg.model.eosId,
    padId: cfg.model.padId,
    addBos: cfg.addBos,
  });
}

/**
 * The model's real tokenizer when `dir` holds tokenizer.json (read bounded, off the event loop,
 * inside `dir`; its ids must fit the model's vocabulary), else the byte tokenizer.
 */
export async function engineTokenizerFor(dir: string, cfg: EngineConfig): Promise<EngineTokenizer> {
  const files = await readTokenizerFiles(dir);
  if (files.tokenizerJson === null) return tokenizerFor(cfg);
  const tk = new ModelTokenizer({ ...files, tokenizerJson: files.tokenizerJson });
  if (tk.size > cfg.model.vocabSize) {
    throw new Error(
      `tokenizer.json has ids up to ${tk.size - 1}, past the model's vocabulary of ${cfg.model.vocabSize} (engine vocabSize)`,
    );
  }
  return tk;
}

/** The parts of a model directory's model-config.yaml the engine reads. */
export interface ModelDirConfig {
  readonly modelFile: string;
  readonly threads?: number;
  readonly engine: Readonly<Record<string, unknown>>;
}

/**
 * Reads `dir/model-config.yaml` for offline generation (LLM.load, the benches); the server's
 * frontend parses it itself (frontend/store/model-config.ts). Read as a model file is: a regular
 * file inside `dir`, size-bounded, off the event loop.
 */
export async function readModelDir(dir: string): Promise<ModelDirConfig> {
  const file = join(dir, 'model-config.yaml');
  const doc = loadYaml(await readModelText(dir, 'model-config.yaml')) as Record<string, unknown> | null;
  if (doc === null || typeof doc !== 'object') throw new Error(`${file}: not a mapping`);
  const engine = doc.engine;
  if (engine === null || typeof engine !== 'object' || Array.isArray(engine))
    throw new Error(`${file}: no engine: block (is this a generative model?)`);
  const modelFile = typeof doc.model === 'string' ? doc.model : 'model.onnx';
  const threads = typeof doc.threads === 'number' ? doc.threads : undefined;
  return threads === undefined
    ? { modelFile, engine: engine as Record<string, unknown> }
    : { modelFile, threads, engine: engine as Record<string, unknown> };
}
