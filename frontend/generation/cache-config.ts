/**
 * The KV-cache settings of a generation model, read from its model-config `engine:` block with
 * the engine's defaults: block size and block count as the engine sizes its pool
 * (schema/kv-capacity.ts, the one rule both sides read), prefix caching on unless turned off.
 * They label the cache-config info gauge (`ts_cache_config_info`, `vllm:cache_config_info`).
 */
import { kvBudgetOfBlock } from '../../schema/kv-capacity.js';

/** The engine's KV-cache settings, exported as the labels of the cache-config info gauge. */
export interface CacheConfigInfo {
  readonly blockSize: number;
  readonly numBlocks: number;
  readonly enablePrefixCaching: boolean;
}

/** Block size, block count and prefix caching of the engine an `engine:` block configures. */
export function cacheConfigOf(engine: Readonly<Record<string, unknown>> | undefined): CacheConfigInfo {
  const { blockSize, numBlocks } = kvBudgetOfBlock(engine);
  return { blockSize, numBlocks, enablePrefixCaching: engine?.enablePrefixCaching !== false };
}

/**
 * Every label the info gauge may declare, valued as vLLM's CacheConfig.metrics_info() prints
 * its fields (Python's str(): `True`, `None`): the K/V rows are float32 (backend/engine's
 * runners), no block lives in CPU memory (no swap space), no model here has a sliding window,
 * and the prefix-cache chain hashes with sha256 (backend/engine/prefix-hash.ts).
 */
export function cacheConfigLabels(cache: CacheConfigInfo): Readonly<Record<string, string>> {
  const blocks = String(cache.numBlocks);
  return {
    block_size: String(cache.blockSize),
    num_blocks: blocks,
    num_gpu_blocks: blocks,
    num_cpu_blocks: 'None',
    enable_prefix_caching: cache.enablePrefixCaching ? 'True' : 'False',
    cache_dtype: 'float32',
    sliding_window: 'None',
    prefix_caching_hash_algo: 'sha256',
  };
}
