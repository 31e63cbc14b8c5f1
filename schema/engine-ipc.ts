/**
 * Messages between the frontend and a generation worker (`handler: generate`), and the plain
 * step-output records of the engine core (vLLM's EngineCoreOutputs) they carry.
 *
 * Clocks: every `*Ts` / `timestamp` field here is `performance.now()` (milliseconds) of the
 * worker process. The frontend only ever subtracts two of them from each other (queue, prefill,
 * decode, inference, ITL) and never mixes them with its own clock; TTFT and e2e are measured by
 * the frontend from its own arrival time when the output message arrives. See docs/engine.md.
 */
import { checkSamplingParams } from './sampling-params-check.js';
import type { Obj } from './value-checks.js';
import { isInt, isNum, isObj, isTokenList } from './value-checks.js';

/** Why a sequence finished (vLLM's finish reasons; `error` for an engine-side failure). */
export type FinishReason = 'stop' | 'length' | 'abort' | 'error';

/** Engine-core event kinds (vLLM's EngineCoreEventType). */
export type EngineEventType = 'QUEUED' | 'SCHEDULED' | 'PREEMPTED';

/** One engine-core event, stamped on the worker's monotonic clock. */
export interface EngineEvent {
  readonly type: EngineEventType;
  /** `performance.now()` of the worker (ms). */
  readonly ts: number;
}

/** Sampling parameters of one request; every field optional, defaults in docs/engine.md. */
export interface GenSamplingParams {
  /** Maximum new tokens per sequence (default 16, like OpenAI's completions). */
  readonly max_tokens?: number;
  /** 0 = greedy (default 1). */
  readonly temperature?: number;
  /** Nucleus sampling mass in (0, 1] (default 1 = off). */
  readonly top_p?: number;
  /** Keep the k most likely tokens; 0 or -1 = off (default). */
  readonly top_k?: number;
  /** Seeds the request's own PRNG so a seed reproduces (0..MAX_SEED); child i of an n>1 request uses seed+i. */
  readonly seed?: number;
  /** Number of sequences for this prompt (default 1); each is a child engine request. */
  readonly n?: number;
  /** Finish with `stop` when the text contains one of these; the stop string is not returned. */
  readonly stop?: readonly string[];
  /** Keep generating past EOS: EOS is sampled like any token and does not stop (default false). */
  readonly ignore_eos?: boolean;
  /** Token ids that finish the sequence with `stop`; the id becomes the stop reason. */
  readonly stop_token_ids?: readonly number[];
  /** No stop applies before this many outputs; EOS and stop ids are banned until then (default 0). */
  readonly min_tokens?: number;
  /** Keep tokens with probability >= min_p × the best one's, in [0, 1] (default 0 = off). */
  readonly min_p?: number;
  /** Subtracted once from each token already in the output, in [-2, 2] (default 0). */
  readonly presence_penalty?: number;
  /** Subtracted per occurrence in the output, in [-2, 2] (default 0). */
  readonly frequency_penalty?: number;
  /** > 0; tokens of prompt and output: positive logits / it, negative × it (default 1 = off). */
  readonly repetition_penalty?: number;
  /** Token id (as a string key, like OpenAI's) → bias added to its logit, in [-100, 100]. */
  readonly logit_bias?: Readonly<Record<string, number>>;
  /** Return logprobs with this many top alternatives per sampled token (absent = no logprobs). */
  readonly logprobs?: number;
  /** Keep the stop string (or stop token's text) that finished the sequence in its text. */
  readonly include_stop_str_in_output?: boolean;
}

/** Logprobs of one sampled token: its own, and the top alternatives (largest first). */
export interface GenTokenLogprobs {
  readonly id: number;
  /** Log-probability; -9999 stands for -Infinity (a banned id). */
  readonly logprob: number;
  readonly top: readonly { readonly id: number; readonly logprob: number }[];
}

/** Frontend → worker: add a request. Give `prompt` (the worker tokenizes) or `promptTokenIds`. */
export interface GenAddMessage {
  readonly type: 'tsserve.gen.add';
  readonly requestId: string;
  readonly prompt?: string;
  readonly promptTokenIds?: readonly number[];
  readonly params: GenSamplingParams;
}

/** Frontend → worker: abort a request (all its n sequences); it finishes with `abort`. */
export interface GenAbortMessage {
  readonly type: 'tsserve.gen.abort';
  readonly requestId: string;
}

/** Prompt accounting, attached once, to the first output of a sequence (vLLM's PrefillStats). */
export interface PrefillStats {
  readonly numPromptTokens: number;
  /** Prompt tokens whose K/V came from the prefix cache (a multiple of the block size, ≤ P−1). */
  readonly numCachedTokens: number;
  /** numPromptTokens − numCachedTokens. */
  readonly numComputedTokens: number;
  /**
   * Cached prompt tokens computed again (vLLM's recomputed_tokens): a prompt ending on a cached
   * full block has that block recomputed, so the last token yields logits. Absent when none.
   */
  readonly numRecomputedTokens?: number;
}

/** The engine-clock intervals of a finished sequence (ms), computed in the worker on finish. */
export interface FinishedTimings {
  /** First SCHEDULED − QUEUED. */
  readonly queueMs: number;
  /** First token − first SCHEDULED. */
  readonly prefillMs: number;
  /** Last token − first token. */
  readonly decodeMs: number;
  /** Last token − first SCHEDULED. */
  readonly inferenceMs: number;
}

/** One sequence's share of a step (vLLM's EngineCoreOutput). */
export interface GenRequestOutput {
  readonly requestId: string;
  /** Sequence index within the request (0..n−1). */
  readonly index: number;
  /** Token ids sampled for this sequence in this step (one; with speculation the accepted drafts and the bonus token; none on abort/error). */
  readonly newTokenIds: readonly number[];
  /** New text since the previous output (UTF-8 safe; text that may start a stop string is held back). */
  readonly text: string;
  /** Events since the previous output of this sequence. */
  readonly events: readonly EngineEvent[];
  /** Only on the sequence's first output. */
  readonly prefill?: PrefillStats;
  /** One per new token, only when the request asked for logprobs. */
  readonly logprobs?: readonly GenTokenLogprobs[];
  /** Set when the sequence finished in this step. */
  readonly finishReason?: FinishReason;
  /** The stop string that matched (absent when EOS stopped the sequence). */
  readonly stopReason?: string | number;
  /** Only when finished: generated tokens in total (after preemptions, no double counting). */
  readonly numGenerationTokens?: number;
  /** Only when finished: the prompt length (also for a sequence that finished without a token). */
  readonly numPromptTokens?: number;
  /** Only when finished with at least one token: the engine-clock intervals. */
  readonly timings?: FinishedTimings;
  /**
   * Only when finished, on an engine with computeNansInLogits: a logits row of this sequence held
   * a NaN at some step (vLLM's is_corrupted). Absent otherwise.
   */
  readonly corrupted?: true;
}

/** The estimated cost of the steps since the previous stats (vLLM's MFU counters), per engine process. */
export interface PerfStats {
  readonly flops: number;
  readonly readBytes: number;
  readonly writeBytes: number;
}

/** Speculative decoding counts since the previous stats (vLLM's SpecDecodingStats, deltas). */
export interface SpecDecodingStats {
  /** Verifies run with at least one draft. */
  readonly numDrafts: number;
  readonly numDraftTokens: number;
  readonly numAcceptedTokens: number;
  /** Accepted drafts by position 0..num_speculative_tokens−1 (they sum to numAcceptedTokens). */
  readonly numAcceptedTokensPerPos: readonly number[];
}

/** One sampled KV block's residency at its eviction (vLLM's KVCacheEvictionEvent), engine-clock ms. */
export interface KvEvictionEvent {
  /** Allocation → eviction. */
  readonly lifetimeMs: number;
  /** Last access (prefix-cache hit, else allocation) → eviction. */
  readonly idleMs: number;
  /** Gaps between its last (at most 4) accesses: at most 3. */
  readonly reuseGapsMs: readonly number[];
}

/** Scheduler state after a step plus counters accumulated since the previous stats (deltas). */
export interface GenSchedulerStats {
  readonly numRunning: number;
  readonly numWaiting: number;
  /** Fraction 0..1 of KV blocks in use (cached free blocks count as free). */
  readonly kvCacheUsage: number;
  /** Tokens looked up in the prefix cache (first schedule of each non-preempted sequence). */
  readonly prefixCacheQueries: number;
  /** Tokens found in the prefix cache. */
  readonly prefixCacheHits: number;
  readonly numPreemptions: number;
  /** Engine steps folded into these stats. */
  readonly numSteps: number;
  /** Only when the engine speculates (`speculative_config`). */
  readonly specDecoding?: SpecDecodingStats;
  /** Sampled KV block evictions since the previous stats (only with kvCacheMetricsSample > 0, and only when there were some). */
  readonly kvEvictions?: readonly KvEvictionEvent[];
  /** Sampled evictions since the previous stats that did not fit the engine's bounded event queue (only when some did not). */
  readonly kvEvictionsDropped?: number;
  /** Detokenizer windows that hit their bound in sequences finished since the previous stats (only when some did). */
  readonly detokenizerFlushes?: number;
  /** Only with enableMfuMetrics, when a step ran items: the estimated cost since the previous stats. */
  readonly perf?: PerfStats;
}

/** What one engine step returns: plain data, ready to send as it is. */
export interface EngineCoreOutputs {
  /** The NEW_TOKENS time of this step, `performance.now()` of the worker (ms). */
  readonly timestamp: number;
  readonly outputs: readonly GenRequestOutput[];
  /** Prompt tokens computed in this step (excluding prefix-cache hits, including recompute). */
  readonly numPromptTokens: number;
  /** Tokens sampled in this step (sum of newTokenIds lengths). */
  readonly numGenerationTokens: number;
  /** Present on every step when statsIntervalMs is 0, else at most once per interval. */
  readonly stats?: GenSchedulerStats;
}

/** Worker → frontend: the outputs of one engine step. */
export interface GenStepMessage extends EngineCoreOutputs {
  readonly type: 'tsserve.gen.step';
  /** Engine index (the worker index within its model; the `engine` label). */
  readonly engine: number;
}

/** Worker → frontend: a request could not be added (bad params, prompt too long) or the engine failed. */
export interface GenErrorMessage {
  readonly type: 'tsserve.gen.error';
  readonly engine: number;
  /** Absent when the whole engine failed (every request is then finished with `error`). */
  readonly requestId?: string;
  readonly message: string;
}

export type ToGenWorkerMessage = GenAddMessage | GenAbortMessage;
export type FromGenWorkerMessage = GenStepMessage | GenErrorMessage;

const FINISH: ReadonlySet<string> = new Set(['stop', 'length', 'abort', 'error']);
const EVENTS: ReadonlySet<string> = new Set(['QUEUED', 'SCHEDULED', 'PREEMPTED']);

/** Result of a decode: the typed message, or one line per problem. */
export type DecodeResult<T> =
  { readonly ok: true; readonly msg: T } | { readonly ok: false; readonly problems: readonly string[] };

/** Validates a frontend → worker generation message. */
export function decodeToGenWorkerMessage(msg: unknown): DecodeResult<ToGenWorkerMessage> {
  const problems: string[] = [];
  if (!isObj(msg)) return { ok: false, problems: ['message: must be an object'] };
  if (typeof msg.requestId !== 'string' || msg.requestId === '') problems.push('requestId: must be a non-empty string');
  if (msg.type === 'tsserve.gen.abort') {
    return problems.length === 0 ? { ok: true, msg: msg as unknown as GenAbortMessage } : { ok: false, problems };
  }
  if (msg.type !== 'tsserve.gen.add')
    return { ok: false, problems: [`type: expected tsserve.gen.add or tsserve.gen.abort, got ${String(msg.type)}`] };
  const hasText = typeof msg.prompt === 'string';
  const hasIds = msg.promptTokenIds !== undefined;
  if (hasText === hasIds) problems.push('prompt: give exactly one of prompt (string) or promptTokenIds');
  if (hasIds && !(isTokenList(msg.promptTokenIds) && (msg.promptTokenIds as unknown[]).length > 0)) {
    problems.push('promptTokenIds: must be a non-empty list of token ids');
  }
  checkSamplingParams(msg.params, problems);
  return problems.length === 0 ? { ok: true, msg: msg as unknown as GenAddMessage } : { ok: false, problems };
}

const isIdLogprob = (e: unknown): boolean => isObj(e) && isInt(e.id) && isNum(e.logprob);
const isTokenLogprobs = (e: unknown): boolean =>
  isIdLogprob(e) && Array.isArray((e as Obj).top) && ((e as Obj).top as unknown[]).every(isIdLogprob);

function checkOutput(o: unknown, i: number, out: string[]): void {
  const at = `outputs[${i}]`;
  if (!isObj(o)) {
    out.push(`${at}: must be an object`);
    return;
  }
  if (typeof o.requestId !== 'string') out.push(`${at}.requestId: must be a string`);
  if (!isInt(o.index)) out.push(`${at}.index: must be an integer`);
  if (!isTokenList(o.newTokenIds)) out.push(`${at}.newTokenIds: must be a list of token ids`);
  if (typeof o.text !== 'string') out.push(`${at}.text: must be a string`);
  if (!Array.isArray(o.events) || !o.events.every((e) => isObj(e) && EVENTS.has(e.type as string) && isNum(e.ts))) {
    out.push(`${at}.events: must be a list of {type, ts}`);
  }
  if (o.finishReason !== undefined && !FINISH.has(o.finishReason as string))
    out.push(`${at}.finishReason: unknown reason ${String(o.finishReason)}`);
  if (o.numPromptTokens !== undefined && !isInt(o.numPromptTokens))
    out.push(`${at}.numPromptTokens: must be an integer`);
  if (o.prefill !== undefined) {
    const p = o.prefill;
    if (
      !isObj(p) ||
      !isInt(p.numPromptTokens) ||
      !isInt(p.numCachedTokens) ||
      !isInt(p.numComputedTokens) ||
      (p.numRecomputedTokens !== undefined && !isInt(p.numRecomputedTokens))
    )
      out.push(`${at}.prefill: must hold integer token counts`);
  }
  if (o.corrupted !== undefined && o.corrupted !== true) out.push(`${at}.corrupted: must be true when present`);
  if (o.logprobs !== undefined && !(Array.isArray(o.logprobs) && o.logprobs.every(isTokenLogprobs)))
    out.push(`${at}.logprobs: must be a list of {id, logprob, top}`);
}

function isEviction(e: unknown): boolean {
  return (
    isObj(e) && isNum(e.lifetimeMs) && isNum(e.idleMs) && Array.isArray(e.reuseGapsMs) && e.reuseGapsMs.every(isNum)
  );
}

/** Validates a worker → frontend generation message. */
export function decodeFromGenWorkerMessage(msg: unknown): DecodeResult<FromGenWorkerMessage> {
  const problems: string[] = [];
  if (!isObj(msg)) return { ok: false, problems: ['message: must be an object'] };
  if (!isInt(msg.engine)) problems.push('engine: must be an integer');
  if (msg.type === 'tsserve.gen.error') {
    if (typeof msg.message !== 'string') problems.push('message: must be a string');
    if (msg.requestId !== undefined && typeof msg.requestId !== 'string') problems.push('requestId: must be a string');
    return problems.length === 0 ? { ok: true, msg: msg as unknown as GenErrorMessage } : { ok: false, problems };
  }
  if (msg.type !== 'tsserve.gen.step')
    return { ok: false, problems: [`type: expected tsserve.gen.step or tsserve.gen.error, got ${String(msg.type)}`] };
  if (!isNum(msg.timestamp)) problems.push('timestamp: must be a number');
  if (!isInt(msg.numPromptTokens)) problems.push('numPromptTokens: must be an integer');
  if (!isInt(msg.numGenerationTokens)) problems.push('numGenerationTokens: must be an integer');
  if (!Array.isArray(msg.outputs)) problems.push('outputs: must be a list');
  else msg.outputs.forEach((o, i) => checkOutput(o, i, problems));
  if (msg.stats !== undefined) {
    const s = msg.stats;
    const keys = [
      'numRunning',
      'numWaiting',
      'kvCacheUsage',
      'prefixCacheQueries',
      'prefixCacheHits',
      'numPreemptions',
      'numSteps',
    ];
    if (!isObj(s) || !keys.every((k) => isNum(s[k]))) problems.push(`stats: must hold numbers ${keys.join(', ')}`);
    else {
      if (s.specDecoding !== undefined) {
        const d = s.specDecoding;
        if (
          !isObj(d) ||
          !['numDrafts', 'numDraftTokens', 'numAcceptedTokens'].every((k) => isInt(d[k])) ||
          !isTokenList(d.numAcceptedTokensPerPos)
        ) {
          problems.push(
            'stats.specDecoding: must hold integer counts numDrafts, numDraftTokens, numAcceptedTokens and a list numAcceptedTokensPerPos',
          );
        }
      }
      if (s.kvEvictions !== undefined && !(Array.isArray(s.kvEvictions) && s.kvEvictions.every(isEviction))) {
        problems.push('stats.kvEvictions: must be a list of {lifetimeMs, idleMs, reuseGapsMs}');
      }
      const pf = s.perf;
      if (
        pf !== undefined &&
        !(isObj(pf) && ['flops', 'readBytes', 'writeBytes'].every((k) => isNum(pf[k]) && (pf[k] as number) >= 0))
      )
        problems.push('stats.perf: must hold non-negative numbers flops, readBytes, writeBytes');
      for (const k of ['kvEvictionsDropped', 'detokenizerFlushes'] as const)
        if (s[k] !== undefined && !(isInt(s[k]) && s[k] > 0)) problems.push(`stats.${k}: must be a positive integer`);
    }
  }
  return problems.length === 0 ? { ok: true, msg: msg as unknown as GenStepMessage } : { ok: false, problems };
}

/** True when `msg` is a generation message from a worker (type is in the `tsserve.gen.` namespace). */
export function isFromGenWorkerMessage(msg: unknown): boolean {
  if (!isObj(msg)) return false;
  return msg.type === 'tsserve.gen.step' || msg.type === 'tsserve.gen.error';
}
