/**
 * What the frontend keeps per in-flight request and per sequence for the stats (vLLM's
 * RequestStateStats): the arrival time on the FRONTEND clock, and the engine-clock timestamps
 * of the sequence's events and tokens. The two clocks are never subtracted from each other.
 */
import type { FinishReason } from '../../schema/engine-ipc.js';

/** One sequence (one of the request's n children). Engine-clock fields are worker ms. */
export interface SequenceState {
  queuedTs: number | undefined;
  /** The FIRST SCHEDULED (re-scheduling after a preemption does not move it). */
  scheduledTs: number | undefined;
  firstTokenTs: number | undefined;
  lastTokenTs: number | undefined;
  numGenerationTokens: number;
  /** Full prompt length from the prefill stats of the first output (cached tokens included). */
  numPromptTokens: number | undefined;
  /** Prompt tokens whose K/V its prefill computed (prompt minus prefix-cache hits), from the same stats. */
  numComputedPromptTokens: number | undefined;
  finishReason: FinishReason | undefined;
}

/** One request as the stats see it. */
export interface RequestState {
  readonly requestId: string;
  /** Frontend `performance.now()` (ms) when the HTTP request arrived, before any parsing. */
  readonly arrivalMs: number;
  readonly n: number;
  /** The effective max_tokens sent to the engine. */
  readonly maxTokens: number;
  /** The prompt length when the frontend sent token ids (else the engine reports it). */
  readonly promptLen: number | undefined;
  readonly seqs: SequenceState[];
  finished: number;
  maxGenerationTokens: number;
}

/** A fresh request state with n empty sequences. */
export function newRequestState(
  requestId: string,
  arrivalMs: number,
  n: number,
  maxTokens: number,
  promptLen?: number,
): RequestState {
  const seqs: SequenceState[] = [];
  for (let i = 0; i < n; i++) {
    seqs.push({
      queuedTs: undefined,
      scheduledTs: undefined,
      firstTokenTs: undefined,
      lastTokenTs: undefined,
      numGenerationTokens: 0,
      numPromptTokens: undefined,
      numComputedPromptTokens: undefined,
      finishReason: undefined,
    });
  }
  return { requestId, arrivalMs, n, maxTokens, promptLen, seqs, finished: 0, maxGenerationTokens: 0 };
}
