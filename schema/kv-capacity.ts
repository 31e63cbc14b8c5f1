/**
 * How long one sequence may grow under a generation engine's KV budget: the block store
 * (numBlocks × blockSize positions) and the working rows (capacities rowGrowStep × 2^k within
 * numRowTokens) both hold it. The engine sizes its pool with kvBudgetOf and refuses at admission
 * a request that cannot fit; the frontend's model-config check reads the same numbers to refuse
 * a served model whose budget cannot hold max_model_len (schema/engine-settings.ts), as vLLM
 * refuses to start. One rule for both sides.
 */
import { validateEngineArgs } from './engine-args.js';

/** The whole KV budget when neither numBlocks nor kvCacheBytes is given. */
export const DEFAULT_KV_CACHE_BYTES = 64 * 1024 * 1024;

/** The sizes the KV budget resolves to. */
export interface KvBudget {
  readonly blockSize: number;
  readonly numBlocks: number;
  /** Positions all working rows together may hold. */
  readonly numRowTokens: number;
  /** Smallest row capacity; capacities are this times a power of two. */
  readonly rowGrowStep: number;
  readonly maxModelLen: number;
}

/** The model dims a position's K/V size depends on. */
export interface KvDims {
  readonly numLayers: number;
  readonly numHeads: number;
  readonly headDim: number;
}

/** Bytes one position holds: K and V, every layer, every head, fp32. */
export function bytesPerPosition(d: KvDims): number {
  return 2 * d.numLayers * d.numHeads * d.headDim * 4;
}

/**
 * Block count and row positions of validated engine args (our names). kvCacheBytes alone
 * splits the budget in halves (each running token lives in both); numBlocks alone gives the
 * rows as many positions as the blocks hold. numRowTokens < 1 means the budget leaves no rows.
 */
export function kvBudgetOf(args: Readonly<Record<string, unknown>>, dims: KvDims, maxModelLen: number): KvBudget {
  const int = (k: string, dflt: number): number => (typeof args[k] === 'number' ? args[k] : dflt);
  const blockSize = int('blockSize', 16);
  const budgetPos = Math.floor(int('kvCacheBytes', DEFAULT_KV_CACHE_BYTES) / bytesPerPosition(dims));
  const numBlocks = int('numBlocks', Math.max(1, Math.floor(budgetPos / 2 / blockSize)));
  const numRowTokens =
    args.kvCacheBytes === undefined && args.numBlocks !== undefined
      ? numBlocks * blockSize
      : budgetPos - numBlocks * blockSize;
  return { blockSize, numBlocks, numRowTokens, rowGrowStep: int('rowGrowStep', 64), maxModelLen };
}

/** The KV budget of a raw `engine:` block (either spelling), with the engine's defaults. */
export function kvBudgetOfBlock(engine: Readonly<Record<string, unknown>> | undefined): KvBudget {
  const a = validateEngineArgs(engine ?? {}).args;
  const int = (k: string, dflt: number): number => (typeof a[k] === 'number' ? a[k] : dflt);
  const maxModelLen = int('maxModelLen', int('maxContext', 1024));
  return kvBudgetOf(
    a,
    { numLayers: int('numLayers', 1), numHeads: int('numHeads', 1), headDim: int('headDim', 1) },
    maxModelLen,
  );
}

/** Row capacity (positions) for a sequence that must hold `positions`: rowGrowStep·2^k, capped at maxModelLen (rounded up). */
export function rowCapacityFor(positions: number, b: Pick<KvBudget, 'rowGrowStep' | 'maxModelLen'>): number {
  const cap = Math.ceil(b.maxModelLen / b.rowGrowStep) * b.rowGrowStep;
  let c = b.rowGrowStep;
  while (c < positions && c < cap) c *= 2;
  return Math.min(c, cap);
}

/**
 * The most positions (prompt + output) one sequence can ever hold: at most maxModelLen, the
 * blocks of the whole pool, and the largest row capacity within the row budget (0: none fits).
 */
export function longestSequence(b: KvBudget): number {
  let byRows = 0;
  for (let c = b.rowGrowStep; ; c *= 2) {
    const cap = rowCapacityFor(c, b);
    if (cap <= b.numRowTokens) byRows = cap;
    if (cap < c || cap >= b.maxModelLen) break;
  }
  return Math.max(0, Math.min(b.maxModelLen, b.numBlocks * b.blockSize, byRows));
}
