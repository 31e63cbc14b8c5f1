/**
 * One OpenAI request as several engine requests: a completions call with a list of prompts
 * starts one per prompt (as vLLM does), each with its own max_tokens. Outputs come back tagged
 * with their prompt; the first failure aborts the others and is reported once.
 */
import type { GenRequestOutput, GenSamplingParams } from '../../schema/engine-ipc.js';
import type { RequestTimings } from '../generation/engine-stats.js';
import type { GenerateRefused } from '../generation/generation-model.js';
import type { GenerationTarget } from './generation-target.js';
import type { ReadyPrompt } from './request-prompts.js';
import { engineRequestId } from './request-id.js';

/** Where the outputs of all prompts go. */
export interface FanOutSink {
  onOutput(o: GenRequestOutput, prompt: number): void;
  onError(status: number, message: string): void;
  /** Each prompt's timings, before the output that finishes it. */
  onTimings(t: RequestTimings): void;
  /** Every prompt's request admitted, when the FanOut was `pending`. */
  onAccepted?(): void;
}

/** The started requests. */
export interface FanOut {
  /** The first prompt's engine request id (the answer's id and `x-request-id` when the client named none). */
  readonly requestId: string;
  /** Aborts every request still running. */
  abort(): void;
  /** Some request's admission is not known yet: `onAccepted` (all admitted) or `onError` follows. */
  readonly pending: boolean;
}

/**
 * Starts one engine request per prompt; refused as a whole when any cannot start. With
 * `idBase` (the client's X-Request-Id) each runs under the base and a fresh suffix
 * (request-id.ts), else under an id the model names.
 */
export function generateAll(
  model: GenerationTarget,
  prompts: readonly ReadyPrompt[],
  params: GenSamplingParams,
  arrivalMs: number,
  sink: FanOutSink,
  traceId?: string,
  idBase?: string,
): FanOut | GenerateRefused {
  if (prompts.length > 1) {
    const refused = model.admits?.(prompts.length);
    if (refused !== undefined && refused !== null) return refused;
  }
  const handles: { abort(): void }[] = [];
  let failed = false;
  const abortAll = (): void => {
    for (const h of handles) h.abort();
  };
  let requestId = '';
  let waiting = 0;
  const accepted = (): void => {
    if (--waiting === 0 && !failed) sink.onAccepted?.();
  };
  for (let p = 0; p < prompts.length; p++) {
    const r = prompts[p]!;
    // The trace id goes with the first prompt, whose id the answer carries (as the route notes it).
    const started = model.generate(
      {
        prompt: r.ids,
        params: { ...params, max_tokens: r.maxTokens },
        arrivalMs,
        ...(p === 0 && traceId !== undefined ? { traceId } : {}),
        ...(idBase !== undefined ? { requestId: engineRequestId(idBase) } : {}),
        // A target that cannot tell (a front's proxy) has the whole request admitted where it runs.
        ...(prompts.length > 1 && model.admits === undefined ? { group: { size: prompts.length, index: p } } : {}),
      },
      {
        onTimings: (t) => sink.onTimings(t),
        onAccepted: accepted,
        onOutput: (o) => {
          if (!failed) sink.onOutput(o, p);
        },
        onError: (status, message) => {
          if (failed) return;
          failed = true;
          abortAll();
          sink.onError(status, message);
        },
      },
    );
    if ('status' in started) {
      failed = true;
      abortAll();
      return started;
    }
    if (p === 0) requestId = started.requestId;
    if (started.pending === true) waiting++;
    handles.push(started);
  }
  return { requestId, abort: abortAll, pending: waiting > 0 };
}
