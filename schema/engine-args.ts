/**
 * The engine arguments of a generative model (the `engine:` block of model-config.yaml, the
 * flags of `tsserve generate`, the overrides of `LLM.load`): one list of settings, each under
 * our camelCase name and vLLM's (or Hugging Face's) snake_case name, and one validator used by
 * the frontend at model load and by the engine offline. Shared here because both sides use it.
 */
import { didYouMean } from './config/doc.js';
import { showSetting as show } from './setting-value.js';
import { checkSpeculativeConfig } from './speculative-config.js';

/** How a setting's value is checked (and parsed from a command-line flag). */
export type EngineArgType = 'int' | 'number' | 'bool' | 'layout' | 'ids' | 'speculative';

/** One engine setting. */
export interface EngineArgDef {
  /** Our spelling, the key the engine reads (camelCase). */
  readonly name: string;
  /** vLLM's spelling (Hugging Face's config name for the model's own dims and ids). */
  readonly snake: string;
  /** Older or alternative spellings still accepted. */
  readonly aliases?: readonly string[];
  readonly type: EngineArgType;
  /** Smallest value for numbers. */
  readonly min?: number;
  /** Largest value for numbers (`number` type only). */
  readonly max?: number;
  readonly help: string;
}

/** Every engine setting, the model's own dims and special ids first. */
export const ENGINE_ARGS: readonly EngineArgDef[] = Object.freeze([
  { name: 'layout', snake: 'layout', type: 'layout', help: 'KV layout: auto, fast or hf' },
  { name: 'vocabSize', snake: 'vocab_size', type: 'int', min: 1, help: 'vocabulary size' },
  {
    name: 'numLayers',
    snake: 'num_layers',
    aliases: ['num_hidden_layers', 'layers'],
    type: 'int',
    min: 1,
    help: 'decoder layers',
  },
  {
    name: 'numHeads',
    snake: 'num_heads',
    aliases: ['num_key_value_heads', 'heads'],
    type: 'int',
    min: 1,
    help: 'K/V heads per layer',
  },
  { name: 'headDim', snake: 'head_dim', type: 'int', min: 1, help: 'floats per head' },
  {
    name: 'maxContext',
    snake: 'max_position_embeddings',
    aliases: ['max_context', 'maxPositions'],
    type: 'int',
    min: 2,
    help: "the model's longest sequence (default maxModelLen, else 1024)",
  },
  { name: 'bosTokenId', snake: 'bos_token_id', aliases: ['bosId', 'bos_id'], type: 'int', min: 0, help: 'BOS id' },
  {
    name: 'eosTokenId',
    snake: 'eos_token_id',
    aliases: ['eosId', 'eos_id'],
    type: 'ids',
    min: 0,
    help: "EOS id, or a list of them (the first is the tokenizer's)",
  },
  {
    name: 'padTokenId',
    snake: 'pad_token_id',
    aliases: ['padId', 'pad_id'],
    type: 'int',
    min: 0,
    help: 'PAD id (fills unused batch slots; never banned)',
  },
  {
    name: 'suppressTokens',
    snake: 'suppress_tokens',
    type: 'ids',
    min: 0,
    help: 'ids never sampled (Hugging Face generation_config)',
  },
  { name: 'blockSize', snake: 'block_size', type: 'int', min: 1, help: 'tokens per KV block' },
  {
    name: 'numBlocks',
    snake: 'num_gpu_blocks_override',
    aliases: ['num_blocks'],
    type: 'int',
    min: 1,
    help: 'KV blocks in the pool',
  },
  {
    name: 'kvCacheBytes',
    snake: 'kv_cache_memory_bytes',
    aliases: ['kv_cache_bytes'],
    type: 'int',
    min: 1,
    help: 'KV budget when numBlocks is absent',
  },
  { name: 'maxNumSeqs', snake: 'max_num_seqs', type: 'int', min: 1, help: 'running sequences at most' },
  { name: 'maxNumBatchedTokens', snake: 'max_num_batched_tokens', type: 'int', min: 1, help: 'tokens per step' },
  { name: 'maxModelLen', snake: 'max_model_len', type: 'int', min: 2, help: 'longest prompt + output' },
  { name: 'enableChunkedPrefill', snake: 'enable_chunked_prefill', type: 'bool', help: 'chunked prefill' },
  {
    name: 'prefillChunkSize',
    snake: 'long_prefill_token_threshold',
    aliases: ['prefill_chunk_size'],
    type: 'int',
    min: 0,
    help: 'largest prefill chunk (0 = the step budget)',
  },
  { name: 'enablePrefixCaching', snake: 'enable_prefix_caching', type: 'bool', help: 'prefix caching' },
  {
    name: 'statsIntervalMs',
    snake: 'stats_interval_ms',
    type: 'number',
    min: 0,
    help: 'scheduler stats at most once per interval (0 = every step)',
  },
  {
    name: 'disableLogStats',
    snake: 'disable_log_stats',
    type: 'bool',
    help: 'produce no scheduler stats at all (the server sets it with --disable-log-stats)',
  },
  {
    name: 'kvCacheMetricsSample',
    snake: 'kv_cache_metrics_sample',
    type: 'number',
    min: 0,
    max: 1,
    help: 'share of KV blocks whose residency is sampled, 0..1 (0 = off)',
  },
  {
    name: 'computeNansInLogits',
    snake: 'compute_nans_in_logits',
    type: 'bool',
    help: 'scan every logits row for NaN and flag the sequences that had one (the server sets it with VLLM_COMPUTE_NANS_IN_LOGITS=1)',
  },
  {
    name: 'enableMfuMetrics',
    snake: 'enable_mfu_metrics',
    type: 'bool',
    help: "estimate each step's FLOPs and memory bytes from the model's shapes (the server sets it with --enable-mfu-metrics)",
  },
  {
    name: 'hiddenSize',
    snake: 'hidden_size',
    aliases: ['d_model', 'n_embd'],
    type: 'int',
    min: 1,
    help: 'model width, for the MFU estimate (default numHeads × headDim)',
  },
  {
    name: 'intermediateSize',
    snake: 'intermediate_size',
    aliases: ['ffn_dim', 'n_inner'],
    type: 'int',
    min: 1,
    help: 'MLP width, for the MFU estimate (default 4 × hiddenSize)',
  },
  { name: 'threads', snake: 'threads', type: 'int', min: 1, help: 'onnxruntime intraOpNumThreads' },
  { name: 'rowGrowStep', snake: 'row_grow_step', type: 'int', min: 1, help: 'fast runner row capacity step' },
  { name: 'addBos', snake: 'add_bos', type: 'bool', help: 'prepend BOS to text prompts' },
  {
    name: 'speculativeConfig',
    snake: 'speculative_config',
    type: 'speculative',
    help: 'speculative decoding: {method: ngram, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min}',
  },
] satisfies EngineArgDef[]);

/** One problem with one key of an engine block: the key as written, its value, what is wrong. */
export interface EngineArgProblem {
  readonly key: string;
  readonly value: unknown;
  /** `unknown` and `conflict` point at the key, `value` at the value. */
  readonly kind: 'unknown' | 'value' | 'conflict';
  /** The whole line after the location, e.g. `engine.max_num_seq: unknown setting (64); did you mean "max_num_seqs"?`. */
  readonly message: string;
}

/** The valid settings under our names only, and every problem (none when the block is valid). */
export interface EngineArgsResult {
  readonly args: Readonly<Record<string, unknown>>;
  readonly problems: readonly EngineArgProblem[];
}

const BY_SPELLING: ReadonlyMap<string, EngineArgDef> = new Map(
  ENGINE_ARGS.flatMap((d) => [d.name, d.snake, ...(d.aliases ?? [])].map((k) => [k, d] as const)),
);

/** Every accepted spelling, for did-you-mean. */
const SPELLINGS: readonly string[] = [...BY_SPELLING.keys()];

/** What a value of `d` must be, for messages. */
function expected(d: EngineArgDef): string {
  switch (d.type) {
    case 'int':
      return `an integer >= ${d.min ?? 0}`;
    case 'number':
      return d.max === undefined ? `a number >= ${d.min ?? 0}` : `a number from ${d.min ?? 0} to ${d.max}`;
    case 'bool':
      return 'true or false';
    case 'layout':
      return 'auto, fast or hf';
    case 'ids':
      return `a token id or a non-empty list of token ids (integers >= ${d.min ?? 0})`;
    case 'speculative':
      return 'a mapping {method: ngram, num_speculative_tokens, prompt_lookup_max, prompt_lookup_min}';
  }
}

function valid(d: EngineArgDef, v: unknown): boolean {
  const min = d.min ?? 0;
  const isInt = (x: unknown): boolean => typeof x === 'number' && Number.isInteger(x) && x >= min;
  switch (d.type) {
    case 'int':
      return isInt(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) && v >= min && v <= (d.max ?? Infinity);
    case 'bool':
      return typeof v === 'boolean';
    case 'layout':
      return v === 'auto' || v === 'fast' || v === 'hf';
    case 'ids':
      return isInt(v) || (Array.isArray(v) && v.length > 0 && v.every(isInt));
    case 'speculative':
      return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

/**
 * Checks an engine block (any spelling of each setting) and returns it under our names. Every
 * problem is listed (the valid keys are still returned): an unknown key (with a did-you-mean), a bad value, or one setting given
 * under two spellings with different values. `where` prefixes keys in messages (`engine.` by
 * default; `''` for none).
 */
export function validateEngineArgs(raw: unknown, where = 'engine'): EngineArgsResult {
  const at = where === '' ? '' : `${where}.`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return {
      args: Object.freeze({}),
      problems: [
        {
          key: '',
          value: raw,
          kind: 'value',
          message: `${where || 'engine'}: must be a mapping of engine settings (got ${show(raw)})`,
        },
      ],
    };
  }
  const problems: EngineArgProblem[] = [];
  const out: Record<string, unknown> = {};
  const from: Record<string, string> = {};
  for (const [key, given] of Object.entries(raw as Record<string, unknown>)) {
    let value = given;
    const d = BY_SPELLING.get(key);
    if (d === undefined) {
      const guess = didYouMean(key, SPELLINGS);
      const hint =
        guess !== null ? `did you mean "${guess}"?` : `known settings: ${ENGINE_ARGS.map((a) => a.snake).join(', ')}`;
      problems.push({
        key,
        value,
        kind: 'unknown',
        message: `${at}${key}: unknown engine setting (value ${show(value)}); ${hint}`,
      });
      continue;
    }
    if (!valid(d, value)) {
      problems.push({ key, value, kind: 'value', message: `${at}${key}: must be ${expected(d)}, got ${show(value)}` });
      continue;
    }
    if (d.type === 'speculative') {
      const spec = checkSpeculativeConfig(value as Record<string, unknown>, `${at}${key}`);
      for (const message of spec.problems) problems.push({ key, value, kind: 'value', message });
      if (spec.config === undefined) continue;
      value = spec.config;
    }
    const prev = from[d.name];
    if (prev !== undefined) {
      if (JSON.stringify(out[d.name]) !== JSON.stringify(value)) {
        problems.push({
          key,
          value,
          kind: 'conflict',
          message: `${at}${key}: ${show(value)} conflicts with ${at}${prev}: ${show(out[d.name])} (the same setting spelled two ways)`,
        });
      }
      continue;
    }
    from[d.name] = key;
    out[d.name] = Array.isArray(value) ? Object.freeze([...(value as unknown[])]) : value;
  }
  return { args: Object.freeze(out), problems };
}

/** A command-line flag of an engine setting: `--max_num_seqs` and `--max-num-seqs` (vLLM takes both). */
export interface EngineArgFlag {
  readonly flag: string;
  readonly def: EngineArgDef;
  /** For util.parseArgs: booleans take no value, everything else a string. */
  readonly parseArgsType: 'boolean' | 'string';
}

/** Every flag spelling of every engine setting (snake, kebab, camel), for a CLI to register in a loop. */
export const ENGINE_ARG_FLAGS: readonly EngineArgFlag[] = Object.freeze(
  ENGINE_ARGS.flatMap((def) => {
    const names = new Set([def.snake, def.snake.replace(/_/g, '-'), def.name]);
    return [...names].map((flag) => ({
      flag,
      def,
      parseArgsType: def.type === 'bool' ? ('boolean' as const) : ('string' as const),
    }));
  }),
);

/** The engine setting a flag name (without `--`) spells, if any. */
export function engineArgOfFlag(flag: string): EngineArgDef | undefined {
  return BY_SPELLING.get(flag) ?? BY_SPELLING.get(flag.replace(/-/g, '_'));
}

/**
 * Parses a flag's text into the value the validator checks: numbers for `int`/`number`,
 * `true`/`false` for `bool`, a comma list of numbers for `ids`. Text that does not parse is
 * passed through as a string so the validator reports it with the key and the value.
 */
export function parseEngineArgText(def: EngineArgDef, text: string): unknown {
  const num = (t: string): unknown => (t.trim() !== '' && Number.isFinite(Number(t)) ? Number(t) : t);
  switch (def.type) {
    case 'int':
    case 'number':
      return num(text);
    case 'bool':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'layout':
      return text;
    // vLLM's --speculative-config takes JSON.
    case 'speculative': {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    }
    case 'ids': {
      const parts = text.split(',').map(num);
      return parts.length === 1 ? parts[0] : parts;
    }
  }
}
