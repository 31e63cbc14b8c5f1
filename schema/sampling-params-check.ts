/**
 * The check of a generation request's sampling params (GenSamplingParams, engine-ipc.ts): the
 * worker runs it on each add message it decodes, and the engine core on every request it is
 * given (LLM.generate's too, whose params no decoder saw), with the same lines for the same
 * values. MAX_SEED, the seed's bound, lives here with it.
 */
import { isInt, isNum, isObj, isTokenList } from './value-checks.js';

/**
 * Largest seed taken (2^53 - 1). vLLM and OpenAI take 64-bit seeds, but a JSON number past this
 * arrives rounded, so two seeds a client tells apart would share one stream.
 */
export const MAX_SEED = Number.MAX_SAFE_INTEGER;

/** Appends one line per problem of sampling params `p` to `out` (the add message's decode calls it so). */
export function checkSamplingParams(p: unknown, out: string[]): void {
  if (!isObj(p)) {
    out.push('params: must be an object');
    return;
  }
  const intField = (k: string, min: number): void => {
    if (p[k] !== undefined && !(isInt(p[k]) && (p[k] as number) >= min))
      out.push(`params.${k}: must be an integer >= ${min}`);
  };
  intField('max_tokens', 1);
  intField('n', 1);
  if (p.seed !== undefined && !(isInt(p.seed) && (p.seed as number) >= 0 && (p.seed as number) <= MAX_SEED)) {
    out.push(`params.seed: must be an integer in [0, ${MAX_SEED}]`);
  }
  if (p.top_k !== undefined && !(isInt(p.top_k) && (p.top_k as number) >= -1))
    out.push('params.top_k: must be an integer >= -1');
  if (p.temperature !== undefined && !(isNum(p.temperature) && p.temperature >= 0))
    out.push('params.temperature: must be a number >= 0');
  if (p.top_p !== undefined && !(isNum(p.top_p) && p.top_p > 0 && p.top_p <= 1))
    out.push('params.top_p: must be a number in (0, 1]');
  if (p.stop !== undefined && !(Array.isArray(p.stop) && p.stop.every((s) => typeof s === 'string' && s.length > 0))) {
    out.push('params.stop: must be a list of non-empty strings');
  }
  if (p.ignore_eos !== undefined && typeof p.ignore_eos !== 'boolean') out.push('params.ignore_eos: must be a boolean');
  if (p.stop_token_ids !== undefined && !isTokenList(p.stop_token_ids))
    out.push('params.stop_token_ids: must be a list of token ids');
  intField('min_tokens', 0);
  const range = (k: string, lo: number, hi: number, loOpen = false): void => {
    const v = p[k];
    if (v !== undefined && !(isNum(v) && (loOpen ? v > lo : v >= lo) && v <= hi))
      out.push(`params.${k}: must be a number in ${loOpen ? '(' : '['}${lo}, ${hi}]`);
  };
  range('min_p', 0, 1);
  range('presence_penalty', -2, 2);
  range('frequency_penalty', -2, 2);
  range('repetition_penalty', 0, 2 ** 31, true);
  if (
    p.logit_bias !== undefined &&
    !(
      isObj(p.logit_bias) &&
      Object.entries(p.logit_bias).every(([k, v]) => /^(0|[1-9][0-9]*)$/.test(k) && isNum(v) && v >= -100 && v <= 100)
    )
  ) {
    out.push('params.logit_bias: must map token ids to numbers in [-100, 100]');
  }
  intField('logprobs', 0);
  if (p.include_stop_str_in_output !== undefined && typeof p.include_stop_str_in_output !== 'boolean')
    out.push('params.include_stop_str_in_output: must be a boolean');
  if (isInt(p.min_tokens) && isInt(p.max_tokens) && (p.min_tokens as number) > (p.max_tokens as number))
    out.push('params.min_tokens: must be <= max_tokens');
}

/** One line per problem of a request's sampling params (none: valid); every front door's check. */
export function samplingParamsProblems(p: unknown): string[] {
  const out: string[] = [];
  checkSamplingParams(p, out);
  return out;
}
