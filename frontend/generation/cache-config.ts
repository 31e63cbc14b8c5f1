/**
 * The KV-cache settings of a generation model, read from its model-config `engine:` block with
 * the engine's defaults (backend/engine/config.ts: blockSize 16; numBlocks given, else half of
 * kvCacheBytes (64 MiB) in blocks, the other half being the working rows; prefix caching on). The frontend cannot import the
 * backend, so the rule is mirrored here; it only labels `ts_cache_config_info`.
 */
import type { CacheConfigInfo } from './engine-series.js';

const DEFAULT_KV_CACHE_BYTES = 64 * 1024 * 1024;

function pick(raw: Readonly<Record<string, unknown>>, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const v = raw[k];
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) return v;
  }
  return undefined;
}

/** Block size, block count and prefix caching of the engine an `engine:` block configures. */
export function cacheConfigOf(engine: Readonly<Record<string, unknown>> | undefined): CacheConfigInfo {
  const raw = engine ?? {};
  const blockSize = Math.floor(pick(raw, ['blockSize']) ?? 16);
  let numBlocks = pick(raw, ['numBlocks']);
  if (numBlocks === undefined) {
    const layers = pick(raw, ['numLayers', 'num_layers', 'layers']) ?? 1;
    const heads = pick(raw, ['numHeads', 'num_heads', 'heads']) ?? 1;
    const headDim = pick(raw, ['headDim', 'head_dim']) ?? 1;
    const bytes = pick(raw, ['kvCacheBytes']) ?? DEFAULT_KV_CACHE_BYTES;
    const positions = Math.floor(bytes / (2 * layers * heads * headDim * 4));
    numBlocks = Math.max(1, Math.floor(positions / 2 / blockSize));
  }
  return { blockSize, numBlocks: Math.floor(numBlocks), enablePrefixCaching: raw.enablePrefixCaching !== false };
}
