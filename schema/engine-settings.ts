/**
 * The rules between a generative model's engine settings, once each key is valid on its own
 * (schema/engine-args.ts): the model's dims and special ids are given, maxModelLen fits the
 * model, special ids are in the vocabulary, the KV budget leaves working rows, speculative
 * decoding has a layout that can verify drafts. The frontend's model-config check and the
 * engine's resolve both run these, so a configuration the worker would refuse at every load
 * (and the frontend retry forever) stops at the config check, with its file:line:col.
 */
import { engineArgOfFlag } from './engine-args.js';
import { DEFAULT_KV_CACHE_BYTES, kvBudgetOf, longestSequence } from './kv-capacity.js';

/** One problem: the setting concerned (our name) and the line. */
export interface EngineSettingProblem {
  readonly name: string;
  /** True when the block has no key for `name` (a position can only be the block's). */
  readonly absent: boolean;
  readonly message: string;
}

/** The settings every engine block must give: the model's own dims and special ids. */
export const REQUIRED_ENGINE_SETTINGS: readonly string[] = Object.freeze([
  'vocabSize',
  'numLayers',
  'numHeads',
  'headDim',
  'bosTokenId',
  'eosTokenId',
  'padTokenId',
]);

type Args = Readonly<Record<string, unknown>>;

/** A setting's ids (an id or a list of them), as validated. */
function idsOf(v: unknown): readonly number[] {
  return Array.isArray(v) ? (v as number[]) : typeof v === 'number' ? [v] : [];
}

/**
 * Problems between the settings of a validated block (`args`, our names). `written` maps each
 * of our names the block spells (a key with a bad value included, so it is not also called
 * missing) to the key as written, which messages quote as `engine.<key>`.
 */
export function checkEngineSettings(args: Args, written: ReadonlyMap<string, string>): EngineSettingProblem[] {
  const out: EngineSettingProblem[] = [];
  const label = (name: string): string => `engine.${written.get(name) ?? name}`;
  const add = (name: string, what: string): void => {
    out.push({ name, absent: !written.has(name), message: `${label(name)}: ${what}` });
  };
  const int = (k: string): number | undefined => (typeof args[k] === 'number' ? args[k] : undefined);
  let dimsKnown = true;
  for (const k of REQUIRED_ENGINE_SETTINGS) {
    if (args[k] !== undefined) continue;
    dimsKnown = false;
    if (!written.has(k)) add(k, "required (the model's own dims and special ids)");
  }
  const maxModelLen = int('maxModelLen');
  const maxContext = int('maxContext');
  if (maxModelLen !== undefined && maxContext !== undefined && maxModelLen > maxContext) {
    add('maxModelLen', `${maxModelLen} exceeds the model's maxContext (max_position_embeddings) ${maxContext}`);
  }
  const vocab = int('vocabSize');
  for (const k of ['eosTokenId', 'suppressTokens']) {
    for (const t of idsOf(args[k]))
      if (vocab !== undefined && t >= vocab) add(k, `token id ${t} is outside the vocabulary (0..${vocab - 1})`);
  }
  if (dimsKnown) {
    const dims = { numLayers: int('numLayers')!, numHeads: int('numHeads')!, headDim: int('headDim')! };
    const b = kvBudgetOf(args, dims, maxModelLen ?? maxContext ?? 1024);
    // The block store takes its share first; what is left is the runner's working rows.
    if (b.numRowTokens < 1)
      add(
        'kvCacheBytes',
        `${int('kvCacheBytes') ?? DEFAULT_KV_CACHE_BYTES} bytes leave no room for working rows after ${b.numBlocks} blocks of ${b.blockSize} tokens; raise kvCacheBytes or lower numBlocks`,
      );
  }
  // vLLM's check: without chunking a whole prompt runs in one step, so a step budget under
  // max_model_len refuses every longer prompt (the engine used to raise it silently).
  const batched = int('maxNumBatchedTokens');
  const len = maxModelLen ?? maxContext;
  if (args.enableChunkedPrefill === false && batched !== undefined && len !== undefined && batched < len) {
    add(
      'maxNumBatchedTokens',
      `max_num_batched_tokens (${batched}) is smaller than max_model_len (${len}). This effectively limits the maximum sequence length to max_num_batched_tokens and makes the engine reject longer sequences. Please increase ${label('maxNumBatchedTokens')} or decrease ${label(maxModelLen !== undefined ? 'maxModelLen' : 'maxContext')}, or enable chunked prefill`,
    );
  }
  // The usual exported layout returns the last position's logits only, so drafts cannot be
  // verified; `auto` and `fast` depend on the graph (the engine checks its num_logits input).
  if (args.speculativeConfig !== undefined && args.layout === 'hf') {
    add(
      'speculativeConfig',
      `n-gram speculative decoding needs logits for several positions, which the hf layout (${label('layout')}) does not return; remove speculative_config, or serve a fast-layout model with a num_logits input (tsserve models generate)`,
    );
  }
  return out;
}

/**
 * vLLM's start-up check, for a served model: the KV budget must hold one sequence of
 * max_model_len, or every client trusting the max_model_len of /v1/models and /tokenize is
 * refused later. The engine itself runs a smaller pool (tests and benches preempt on purpose)
 * and refuses at admission; a served model is refused at its config check instead. Null when
 * it fits or the dims are missing (checkEngineSettings names those).
 */
export function checkKvHoldsMaxModelLen(args: Args, written: ReadonlyMap<string, string>): EngineSettingProblem | null {
  const int = (k: string): number | undefined => (typeof args[k] === 'number' ? args[k] : undefined);
  const [numLayers, numHeads, headDim] = [int('numLayers'), int('numHeads'), int('headDim')];
  if (numLayers === undefined || numHeads === undefined || headDim === undefined) return null;
  const maxModelLen = int('maxModelLen') ?? int('maxContext') ?? 1024;
  const b = kvBudgetOf(args, { numLayers, numHeads, headDim }, maxModelLen);
  if (b.numRowTokens < 1) return null;
  const longest = longestSequence(b);
  if (longest >= maxModelLen) return null;
  const byBlocks = b.numBlocks * b.blockSize;
  const why =
    longest === byBlocks
      ? `numBlocks ${b.numBlocks} × blockSize ${b.blockSize}`
      : `the working rows' ${b.numRowTokens} positions, in rows of ${b.rowGrowStep} × 2^k`;
  // Named at maxModelLen as written, else at maxContext (it sets the default), else the block.
  const name = written.has('maxModelLen') || !written.has('maxContext') ? 'maxModelLen' : 'maxContext';
  const at = `engine.${written.get(name) ?? name}`;
  return {
    name,
    absent: !written.has(name),
    message: `${at}: The model's max seq len (${maxModelLen}) is larger than the maximum number of tokens that can be stored in KV cache (${longest}: ${why}). Try increasing engine.kvCacheBytes or engine.numBlocks, or decreasing engine.maxModelLen to ${longest}.`,
  };
}

/** Our name → the key as written, for every key of `block` that spells a setting. */
export function writtenNames(...blocks: readonly Args[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const block of blocks) {
    for (const key of Object.keys(block)) {
      const name = engineArgOfFlag(key)?.name;
      if (name !== undefined && !m.has(name)) m.set(name, key);
    }
  }
  return m;
}
