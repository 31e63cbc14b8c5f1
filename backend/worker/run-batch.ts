/**
 * Runs one batch through a loaded handler and turns what it returned (or threw) into one
 * response per request, in order. Times the whole pipeline (HandlerTime) and its inference
 * stage (PredictionTime); a single-function handler's whole `handle` is its inference. Times
 * are rounded to whole nanoseconds (schema/elapsed.ts).
 */
import { performance } from 'perf_hooks';
import type { BatchResponse } from '../../schema/worker-protocol.js';
import type { HandlerContext, HandlerRequest } from '../handlers/types.js';
import { isError, messageOf, statusOf } from '../handlers/request-error.js';
import type { LoadedHandler } from './load-handler.js';
import { roundToNs } from '../../schema/elapsed.js';

/** The answers to one batch and where the time went. */
export interface BatchOutcome {
  readonly responses: BatchResponse[];
  readonly handlerMs: number;
  readonly predictionMs: number;
  /** The error the handler threw for the whole batch, if any (for the worker's log). */
  readonly thrown: unknown;
}

/** Runs the handler on `requests`; never rejects. */
export async function runBatch(
  h: LoadedHandler,
  requests: readonly HandlerRequest[],
  ctx: HandlerContext,
): Promise<BatchOutcome> {
  const t0 = performance.now();
  let predictionMs = 0;
  let out: unknown;
  try {
    if (h.kind === 'handle') {
      out = await h.handle(requests, ctx);
      predictionMs = roundToNs(performance.now() - t0);
    } else {
      const s = h.stages;
      const batch = s.preprocess ? await s.preprocess(requests, ctx) : requests;
      const t1 = performance.now();
      const raw = s.inference ? await s.inference(batch, ctx) : batch;
      predictionMs = roundToNs(performance.now() - t1);
      out = s.postprocess ? await s.postprocess(raw, ctx) : raw;
    }
  } catch (err) {
    const handlerMs = roundToNs(performance.now() - t0);
    return { responses: failAll(requests.length, statusOf(err), messageOf(err)), handlerMs, predictionMs, thrown: err };
  }
  const handlerMs = roundToNs(performance.now() - t0);
  if (!Array.isArray(out) || out.length !== requests.length) {
    const got = Array.isArray(out) ? `${out.length} answers` : typeof out;
    const msg = `handler returned ${got} for a batch of ${requests.length} (it must return one answer per request)`;
    return { responses: failAll(requests.length, 500, msg), handlerMs, predictionMs, thrown: new Error(msg) };
  }
  const responses = out.map((item: unknown): BatchResponse =>
    isError(item) ? { ok: false, status: statusOf(item), message: messageOf(item) } : { ok: true, body: item },
  );
  return { responses, handlerMs, predictionMs, thrown: undefined };
}

/** The same failure for every request of a batch. */
export function failAll(n: number, status: number, message: string): BatchResponse[] {
  return Array.from({ length: n }, () => ({ ok: false as const, status, message }));
}
