/**
 * The KV-cache settings of a generation model, read from its model-config `engine:` block with
 * the engine's defaults: block size and block count as the engine sizes its pool
 * (schema/kv-capacity.ts, the one rule both sides read), prefix caching on unless turned off.
 * It labels `ts_cache_config_info`.
 */
import { kvBudgetOfBlock } from '../../schema/kv-capacity.js';
import type { CacheConfigInfo } from './engine-series.js';

/** Block size, block count and prefix caching of the engine an `engine:` block configures. */
export function cacheConfigOf(engine: Readonly<Record<string, unknown>> | undefined): CacheConfigInfo {
  const { blockSize, numBlocks } = kvBudgetOfBlock(engine);
  return { blockSize, numBlocks, enablePrefixCaching: engine?.enablePrefixCaching !== false };
}
