/**
 * Engine settings (the `engine:` block of a generative model's model-config.yaml) and the model
 * dimensions the engine needs, resolved once with defaults; nothing downstream re-checks them.
 */

/** Dimensions and special ids of a decoder model, as written by the model generator. */
export interface ModelSpec {
  readonly vocabSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly headDim: number;
  /** Longest sequence (prompt + generated) the model accepts. */
  readonly maxContext: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
}

/** KV layouts the runners understand: our fast graph, or the usual exported (HF-style) graph. */
export type KvLayout = 'fast' | 'hf';

/** Resolved engine settings. */
export interface EngineConfig {
  readonly model: ModelSpec;
  /** `auto` picks from the graph's input names. */
  readonly layout: KvLayout | 'auto';
  /** Tokens per KV block (the unit of allocation, usage, preemption and prefix sharing). */
  readonly blockSize: number;
  /** Block count; when absent, half of kvCacheBytes in blocks. */
  readonly numBlocks: number;
  /**
   * Positions the runner's working rows may hold (rows are allocated in power-of-two
   * capacities); with the block store this is the whole KV budget.
   */
  readonly numRowTokens: number;
  readonly maxNumSeqs: number;
  /** Token budget of one step (prompt chunks + decode tokens). */
  readonly maxNumBatchedTokens: number;
  readonly enableChunkedPrefill: boolean;
  /** Largest prefill chunk when chunked prefill is on. */
  readonly prefillChunkSize: number;
  readonly enablePrefixCaching: boolean;
  /** Longest sequence the engine accepts (≤ model.maxContext). */
  readonly maxModelLen: number;
  /** 0 = scheduler stats on every step; else at most once per interval (deltas accumulate). */
  readonly statsIntervalMs: number;
  /** onnxruntime intraOpNumThreads. */
  readonly threads: number;
  /** Packed-row capacity grows in multiples of this many positions (fast runner). */
  readonly rowGrowStep: number;
  /** Prepend BOS when the engine tokenizes a prompt. */
  readonly addBos: boolean;
}

/** Default KV budget when neither numBlocks nor kvCacheBytes is given. */
export const DEFAULT_KV_CACHE_BYTES = 64 * 1024 * 1024;

/** Bytes one block holds: K and V, every layer, every head, blockSize positions, fp32. */
export function bytesPerBlock(model: ModelSpec, blockSize: number): number {
  return 2 * model.numLayers * model.numHeads * blockSize * model.headDim * 4;
}

type Raw = Readonly<Record<string, unknown>>;

function num(raw: Raw, keys: readonly string[], dflt: number | undefined, problems: string[], min = 0): number {
  for (const k of keys) {
    const v = raw[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min) {
      problems.push(`engine.${k}: must be a number >= ${min}, got ${JSON.stringify(v)}`);
      return dflt ?? min;
    }
    return v;
  }
  if (dflt === undefined) problems.push(`engine.${keys[0]}: required`);
  return dflt ?? min;
}

function bool(raw: Raw, key: string, dflt: boolean, problems: string[]): boolean {
  const v = raw[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'boolean') problems.push(`engine.${key}: must be true or false`);
  return v === true;
}

/**
 * Resolves the raw `engine:` block (model dims and special ids included, as the model generator
 * writes them) plus overrides into an EngineConfig; throws one Error listing every problem.
 */
export function resolveEngineConfig(raw: Raw, overrides: Raw = {}): EngineConfig {
  const r: Raw = { ...raw, ...overrides };
  const p: string[] = [];
  const model: ModelSpec = {
    vocabSize: num(r, ['vocabSize', 'vocab_size'], undefined, p, 1),
    numLayers: num(r, ['numLayers', 'num_layers', 'layers'], undefined, p, 1),
    numHeads: num(r, ['numHeads', 'num_heads', 'heads'], undefined, p, 1),
    headDim: num(r, ['headDim', 'head_dim'], undefined, p, 1),
    maxContext: num(r, ['maxContext', 'max_context', 'maxPositions'], 1024, p, 2),
    bosId: num(r, ['bosId', 'bos_id', 'bosTokenId'], undefined, p),
    eosId: num(r, ['eosId', 'eos_id', 'eosTokenId'], undefined, p),
    padId: num(r, ['padId', 'pad_id', 'padTokenId'], undefined, p),
  };
  const layoutRaw = r.layout ?? 'auto';
  if (layoutRaw !== 'auto' && layoutRaw !== 'fast' && layoutRaw !== 'hf') p.push(`engine.layout: must be auto, fast or hf`);
  const blockSize = num(r, ['blockSize'], 16, p, 1);
  // vLLM v1's scheduler by default (running first, chunks and decodes in one step); false = v0's prefill-first.
  const chunked = bool(r, 'enableChunkedPrefill', true, p);
  const maxModelLen = Math.min(num(r, ['maxModelLen'], model.maxContext, p, 2), model.maxContext);
  const kvBytes = num(r, ['kvCacheBytes'], DEFAULT_KV_CACHE_BYTES, p, 1);
  // One budget holds every K/V: the block store and the working rows. kvCacheBytes alone splits
  // it in halves (each running token lives in both); numBlocks alone gives the rows as many
  // positions as the blocks hold (the budget is then twice the store).
  const bytesPerPos = bytesPerBlock(model, 1);
  const budgetPos = Math.floor(kvBytes / bytesPerPos);
  const numBlocks = r.numBlocks !== undefined ? num(r, ['numBlocks'], 1, p, 1) : Math.max(1, Math.floor(budgetPos / 2 / blockSize));
  const numRowTokens = r.kvCacheBytes === undefined && r.numBlocks !== undefined ? Math.floor(numBlocks) * Math.floor(blockSize) : budgetPos - Math.floor(numBlocks) * Math.floor(blockSize);
  if (numRowTokens < 1) p.push(`engine.kvCacheBytes: ${kvBytes} bytes leave no room for working rows after ${Math.floor(numBlocks)} blocks`);
  const prefillChunkSize = num(r, ['prefillChunkSize'], 128, p, 1);
  // Without chunking a whole prompt must fit one step's budget.
  const budgetDefault = chunked ? 512 : Math.max(2048, maxModelLen);
  let maxNumBatchedTokens = num(r, ['maxNumBatchedTokens'], budgetDefault, p, 1);
  if (!chunked && maxNumBatchedTokens < maxModelLen) maxNumBatchedTokens = maxModelLen;
  if (p.length > 0) throw new Error(`invalid engine settings:\n  ${p.join('\n  ')}`);
  return Object.freeze({
    model: Object.freeze(model),
    layout: layoutRaw as KvLayout | 'auto',
    blockSize: Math.floor(blockSize),
    numBlocks: Math.floor(numBlocks),
    numRowTokens,
    maxNumSeqs: Math.max(1, Math.floor(num(r, ['maxNumSeqs'], 32, p, 1))),
    maxNumBatchedTokens: Math.floor(maxNumBatchedTokens),
    enableChunkedPrefill: chunked,
    prefillChunkSize: Math.floor(prefillChunkSize),
    enablePrefixCaching: bool(r, 'enablePrefixCaching', true, p),
    maxModelLen: Math.floor(maxModelLen),
    statsIntervalMs: num(r, ['statsIntervalMs'], 0, p),
    threads: Math.max(1, Math.floor(num(r, ['threads'], 1, p, 1))),
    rowGrowStep: Math.max(1, Math.floor(num(r, ['rowGrowStep'], 64, p, 1))),
    addBos: bool(r, 'addBos', true, p),
  });
}
