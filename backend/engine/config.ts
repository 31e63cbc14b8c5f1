/**
 * Engine settings (the `engine:` block of a generative model's model-config.yaml) and the model
 * dimensions the engine needs, resolved once with defaults; nothing downstream re-checks them.
 */
import { validateEngineArgs } from '../../schema/engine-args.js';
import type { NgramSpeculativeConfig } from '../../schema/speculative-config.js';
import { DEFAULT_KV_CACHE_BYTES, kvBudgetOf } from '../../schema/kv-capacity.js';
import { checkEngineSettings, writtenNames } from '../../schema/engine-settings.js';
import type { KvLayout } from '../../schema/kv-layout.js';

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

/** KV layouts the runners understand (schema/kv-layout.ts). */
export type { KvLayout };

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
  /** vLLM's disable_log_stats: the engine builds no scheduler stats at all. */
  readonly disableLogStats: boolean;
  /** Share of KV blocks whose residency is sampled (vLLM's --kv-cache-metrics-sample), 0..1; 0 = off. */
  readonly kvCacheMetricsSample: number;
  /** vLLM's VLLM_COMPUTE_NANS_IN_LOGITS: scan every logits row for NaN (off: no scan at all). */
  readonly computeNansInLogits: boolean;
  /** vLLM's --enable-mfu-metrics: estimate each step's FLOPs and bytes (backend/engine/model-cost.ts). */
  readonly enableMfuMetrics: boolean;
  /** Model width for the MFU estimate (`hiddenSize`; default numHeads × headDim). */
  readonly hiddenSize: number;
  /** MLP width for the MFU estimate (`intermediateSize`; default 4 × hiddenSize, GPT-2's n_inner). */
  readonly intermediateSize: number;
  /** onnxruntime intraOpNumThreads. */
  readonly threads: number;
  /** Packed-row capacity grows in multiples of this many positions (fast runner). */
  readonly rowGrowStep: number;
  /** Prepend BOS when the engine tokenizes a prompt. */
  readonly addBos: boolean;
  /** Every EOS id of the model (`eosTokenId` may be a list, as in generation_config); model.eosId is the first. */
  readonly eosTokenIds: readonly number[];
  /** Ids never sampled (`suppressTokens`); BOS and PAD are not banned unless listed here. */
  readonly suppressTokenIds: readonly number[];
  /** n-gram speculative decoding (vLLM's `speculative_config`), or null when off. */
  readonly speculative: NgramSpeculativeConfig | null;
}

/** Default KV budget when neither numBlocks nor kvCacheBytes is given. */
export { DEFAULT_KV_CACHE_BYTES };

/** Bytes one block holds: K and V, every layer, every head, blockSize positions, fp32. */
export function bytesPerBlock(model: ModelSpec, blockSize: number): number {
  return 2 * model.numLayers * model.numHeads * blockSize * model.headDim * 4;
}

type Raw = Readonly<Record<string, unknown>>;

/** Validated engine settings (our names), or an Error listing every problem. */
function validated(raw: Raw, where: string, problems: string[]): Raw {
  const r = validateEngineArgs(raw, where);
  for (const p of r.problems) problems.push(p.message);
  return r.args;
}

/**
 * Resolves the raw `engine:` block (model dims and special ids included, as the model generator
 * writes them; our camelCase names or vLLM's snake_case ones) plus overrides into an
 * EngineConfig; throws one Error listing every problem (unknown keys, bad values, conflicts).
 */
export function resolveEngineConfig(raw: Raw, overrides: Raw = {}): EngineConfig {
  const p: string[] = [];
  const r: Raw = { ...validated(raw, 'engine', p), ...validated(overrides, 'override', p) };
  // The rules between settings, shared with the frontend's model-config check.
  for (const problem of checkEngineSettings(r, writtenNames(overrides, raw))) p.push(problem.message);
  const int = (k: string, dflt: number): number => (r[k] as number | undefined) ?? dflt;
  const eosRaw = r.eosTokenId;
  const eosTokenIds: readonly number[] = Object.freeze(
    Array.isArray(eosRaw) ? [...(eosRaw as number[])] : eosRaw === undefined ? [] : [eosRaw as number],
  );
  const maxModelLenRaw = r.maxModelLen as number | undefined;
  const maxContext = int('maxContext', maxModelLenRaw ?? 1024);
  const model: ModelSpec = {
    vocabSize: int('vocabSize', 1),
    numLayers: int('numLayers', 1),
    numHeads: int('numHeads', 1),
    headDim: int('headDim', 1),
    maxContext,
    bosId: int('bosTokenId', 0),
    eosId: eosTokenIds[0] ?? 0,
    padId: int('padTokenId', 0),
  };
  const maxModelLen = maxModelLenRaw ?? maxContext;
  const suppressRaw = r.suppressTokens;
  const suppressTokenIds: readonly number[] = Object.freeze(
    Array.isArray(suppressRaw)
      ? [...(suppressRaw as number[])]
      : suppressRaw === undefined
        ? []
        : [suppressRaw as number],
  );
  if (p.length > 0) throw new Error(`invalid engine settings:\n  ${p.join('\n  ')}`);
  const blockSize = int('blockSize', 16);
  // vLLM v1's scheduler by default (running first, chunks and decodes in one step); false = v0's prefill-first.
  const chunked = (r.enableChunkedPrefill as boolean | undefined) ?? true;
  // One budget holds every K/V: the block store and the working rows (the frontend's config
  // check reads the same split, schema/kv-capacity.ts); checkEngineSettings saw rows left.
  const { numBlocks, numRowTokens } = kvBudgetOf(r, model, maxModelLen);
  // Without chunking a whole prompt must fit one step's budget: the default holds maxModelLen,
  // and a smaller one given is refused (checkEngineSettings, as vLLM refuses it).
  const budgetDefault = chunked ? 512 : Math.max(2048, maxModelLen);
  const maxNumBatchedTokens = int('maxNumBatchedTokens', budgetDefault);
  // vLLM's long_prefill_token_threshold: 0 means no cap beyond the step budget.
  const chunk = int('prefillChunkSize', 128);
  // The tiny LMs' (and GPT-2's) width: every query head is a K/V head here.
  const hiddenSize = int('hiddenSize', model.numHeads * model.headDim);
  return Object.freeze({
    model: Object.freeze(model),
    layout: (r.layout as KvLayout | 'auto' | undefined) ?? 'auto',
    blockSize,
    numBlocks,
    numRowTokens,
    maxNumSeqs: int('maxNumSeqs', 32),
    maxNumBatchedTokens,
    enableChunkedPrefill: chunked,
    prefillChunkSize: chunk === 0 ? maxNumBatchedTokens : chunk,
    enablePrefixCaching: (r.enablePrefixCaching as boolean | undefined) ?? true,
    maxModelLen,
    statsIntervalMs: int('statsIntervalMs', 0),
    disableLogStats: (r.disableLogStats as boolean | undefined) ?? false,
    kvCacheMetricsSample: int('kvCacheMetricsSample', 0),
    computeNansInLogits: (r.computeNansInLogits as boolean | undefined) ?? false,
    enableMfuMetrics: (r.enableMfuMetrics as boolean | undefined) ?? false,
    hiddenSize,
    intermediateSize: int('intermediateSize', 4 * hiddenSize),
    threads: int('threads', 1),
    rowGrowStep: int('rowGrowStep', 64),
    addBos: (r.addBos as boolean | undefined) ?? true,
    eosTokenIds,
    suppressTokenIds,
    speculative: (r.speculativeConfig as NgramSpeculativeConfig | undefined) ?? null,
  });
}
