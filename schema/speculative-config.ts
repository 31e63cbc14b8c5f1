/**
 * vLLM's `speculative_config` engine setting (method `ngram`, prompt lookup): its keys in vLLM's
 * spelling or ours, checked and resolved with vLLM's defaults. validateEngineArgs
 * (engine-args.ts) runs it on the setting's mapping; the engine reads the resolved config.
 */
import { didYouMean } from './config/doc.js';
import { showSetting as show } from './setting-value.js';

/** vLLM's `ngram` speculative method, resolved (our names; defaults filled in). */
export interface NgramSpeculativeConfig {
  readonly method: 'ngram';
  /** Drafts proposed per step at most (vLLM's num_speculative_tokens). */
  readonly numSpeculativeTokens: number;
  /** Longest n-gram looked up (vLLM's prompt_lookup_max). */
  readonly promptLookupMax: number;
  /** Shortest n-gram looked up (vLLM's prompt_lookup_min). */
  readonly promptLookupMin: number;
}

/** The keys of `speculative_config`: vLLM's spelling, then ours. */
const SPEC_KEYS: readonly (readonly [string, string])[] = [
  ['method', 'method'],
  ['num_speculative_tokens', 'numSpeculativeTokens'],
  ['prompt_lookup_max', 'promptLookupMax'],
  ['prompt_lookup_min', 'promptLookupMin'],
];
const SPEC_KEY_OF: ReadonlyMap<string, string> = new Map(
  SPEC_KEYS.flatMap(
    ([snake, camel]) =>
      [
        [snake, camel],
        [camel, camel],
      ] as const,
  ),
);

/**
 * Checks a `speculative_config` mapping (vLLM's keys or ours) and resolves it as vLLM does:
 * method `ngram` (the only one), num_speculative_tokens required; with neither lookup bound both
 * are 5, with one the other takes its value; 1 <= min <= max. Messages are prefixed with `at`.
 */
export function checkSpeculativeConfig(
  raw: Readonly<Record<string, unknown>>,
  at: string,
): { readonly config?: NgramSpeculativeConfig; readonly problems: readonly string[] } {
  const problems: string[] = [];
  const got: Record<string, unknown> = {};
  const from: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    const name = SPEC_KEY_OF.get(key);
    if (name === undefined) {
      const guess = didYouMean(key, [...SPEC_KEY_OF.keys()]);
      problems.push(
        `${at}.${key}: unknown speculative_config key (value ${show(value)}); ${guess !== null ? `did you mean "${guess}"?` : `known keys: ${SPEC_KEYS.map(([k]) => k).join(', ')}`}`,
      );
      continue;
    }
    if (name === 'method') {
      if (value !== 'ngram')
        problems.push(`${at}.${key}: only "ngram" (prompt lookup) is supported, got ${show(value)}`);
    } else if (!(typeof value === 'number' && Number.isInteger(value) && value >= 1)) {
      problems.push(`${at}.${key}: must be an integer >= 1, got ${show(value)}`);
      continue;
    }
    if (from[name] !== undefined && got[name] !== value) {
      problems.push(
        `${at}.${key}: ${show(value)} conflicts with ${at}.${from[name]}: ${show(got[name])} (the same key spelled two ways)`,
      );
      continue;
    }
    from[name] = key;
    got[name] = value;
  }
  if (!('method' in from)) problems.push(`${at}.method: required (the only method is "ngram")`);
  if (
    !('numSpeculativeTokens' in from) &&
    !problems.some((p) => p.startsWith(`${at}.num_speculative_tokens:`) || p.startsWith(`${at}.numSpeculativeTokens:`))
  ) {
    problems.push(`${at}.num_speculative_tokens: required (drafts per step, an integer >= 1)`);
  }
  if (problems.length > 0) return { problems };
  let min = got.promptLookupMin as number | undefined;
  let max = got.promptLookupMax as number | undefined;
  // vLLM's defaults: neither bound → 5 and 5; one bound → the other equals it.
  if (min === undefined && max === undefined) min = max = 5;
  min ??= max!;
  max ??= min;
  if (min > max) return { problems: [`${at}.prompt_lookup_min: ${min} is greater than prompt_lookup_max ${max}`] };
  return {
    config: Object.freeze({
      method: 'ngram',
      numSpeculativeTokens: got.numSpeculativeTokens as number,
      promptLookupMax: max,
      promptLookupMin: min,
    }),
    problems,
  };
}
