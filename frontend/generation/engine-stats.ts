/**
 * Turns one engine's step messages into the vLLM metric families (see docs/llm-metrics.md):
 * per step the iteration tokens and token counters, per sequence TTFT (frontend clock) and
 * ITL (engine clock), per finished sequence the success counter and the request histograms,
 * per finished request (all n sequences done) the params and max-generation histograms, and
 * the scheduler stats into gauges and counters. Plain data, one pass over the outputs.
 */
import type { EngineCoreOutputs, FinishReason, GenRequestOutput } from '../../schema/engine-ipc.js';
import type { EngineSeries } from './engine-series.js';
import type { LoggingStatLogger } from './logging-stat-logger.js';
import type { RequestState, SequenceState } from './request-state.js';
import { newRequestState } from './request-state.js';

/** Engine-clock milliseconds → seconds. */
const S = 1 / 1000;

/** A finished request's phases in ms, as its histograms got them (the longest of its n sequences). */
export interface RequestTimings {
  readonly queueMs: number;
  readonly prefillMs: number;
  readonly decodeMs: number;
  /** Arrival to the last output, frontend clock (the e2e histogram's value). */
  readonly totalMs: number;
}

/** The stats side of one engine. */
export class EngineStats {
  private readonly requests = new Map<string, RequestState>();
  /** Timings of requests finished in the step being processed, taken by the engine (Server-Timing). */
  private readonly finishedTimings = new Map<string, RequestTimings>();

  /** `nowMs` is the frontend's monotonic clock (performance.now), the one arrivals use. */
  constructor(
    private readonly series: EngineSeries,
    private readonly nowMs: () => number,
    private readonly logger: LoggingStatLogger | null = null,
  ) {}

  /** Requests whose sequences have not all finished. */
  get inFlight(): number {
    return this.requests.size;
  }

  /** Starts tracking a request sent to the engine; `promptLen` when the frontend knows it (token ids). */
  addRequest(requestId: string, arrivalMs: number, n: number, maxTokens: number, promptLen?: number): void {
    this.requests.set(requestId, newRequestState(requestId, arrivalMs, n, maxTokens, promptLen));
  }

  /** Forgets a request the engine refused (it never ran: nothing is counted). */
  dropRequest(requestId: string): void {
    this.requests.delete(requestId);
  }

  /** The timings of a request that finished in the last step, once (then forgotten). */
  takeTimings(requestId: string): RequestTimings | undefined {
    const t = this.finishedTimings.get(requestId);
    this.finishedTimings.delete(requestId);
    return t;
  }

  /** Processes one step message. */
  onStep(step: EngineCoreOutputs): void {
    this.finishedTimings.clear();
    const now = this.nowMs();
    const sr = this.series;
    let promptTokens = 0;
    let cachedTokens = 0;
    let recomputedTokens = 0;
    let generationTokens = 0;
    let firstOutputs = 0;
    for (const o of step.outputs) {
      const req = this.requests.get(o.requestId);
      const seq = req?.seqs[o.index];
      if (req === undefined || seq === undefined || seq.finishReason !== undefined) continue;
      for (const e of o.events) {
        if (e.type === 'QUEUED') seq.queuedTs ??= e.ts;
        else if (e.type === 'SCHEDULED') seq.scheduledTs ??= e.ts;
      }
      if (o.prefill !== undefined && seq.numPromptTokens === undefined) {
        seq.numPromptTokens = o.prefill.numPromptTokens;
        seq.numComputedPromptTokens = o.prefill.numComputedTokens;
        promptTokens += o.prefill.numPromptTokens;
        cachedTokens += o.prefill.numCachedTokens;
        recomputedTokens += o.prefill.numRecomputedTokens ?? 0;
        firstOutputs++;
      }
      const k = o.newTokenIds.length;
      if (k > 0) {
        generationTokens += k;
        seq.numGenerationTokens += k;
        if (seq.firstTokenTs === undefined) {
          seq.firstTokenTs = step.timestamp;
          sr.ttft.record((now - req.arrivalMs) * S, req.requestId);
        } else {
          const itl = (step.timestamp - (seq.lastTokenTs as number)) * S;
          sr.itl.record(itl, req.requestId);
          sr.tpotAlias.record(itl, req.requestId);
        }
        seq.lastTokenTs = step.timestamp;
      }
      if (o.finishReason !== undefined) this.finish(req, seq, o, now);
    }
    if (promptTokens > 0) {
      sr.promptTokens.record(promptTokens);
      // Computed + cache hits = prompt tokens, counted at the same moment (vLLM's PromptTokenStats).
      if (promptTokens > cachedTokens) sr.promptTokensBySource.local_compute.record(promptTokens - cachedTokens);
      if (cachedTokens > 0) {
        sr.promptTokensBySource.local_cache_hit.record(cachedTokens);
        sr.promptTokensCached.record(cachedTokens);
      }
    }
    if (recomputedTokens > 0) sr.promptTokensRecomputed.record(recomputedTokens);
    if (generationTokens > 0) sr.generationTokens.record(generationTokens);
    if (promptTokens + generationTokens > 0) sr.iterationTokens.record(promptTokens + generationTokens);
    // The log's prompt throughput: prompt minus cached tokens, once per sequence (vLLM's computed count).
    this.logger?.recordStep(promptTokens - cachedTokens, generationTokens, firstOutputs);
    const st = step.stats;
    if (st !== undefined) {
      sr.running.record(st.numRunning);
      sr.waiting.record(st.numWaiting);
      // Every waiting request waits for room (batch, token budget, KV cache): none is deferred here.
      sr.waitingByReason.capacity.record(st.numWaiting);
      sr.kvCacheUsage.record(st.kvCacheUsage);
      sr.gpuCacheUsage.record(st.kvCacheUsage);
      if (st.prefixCacheQueries > 0) sr.prefixCacheQueries.record(st.prefixCacheQueries);
      if (st.prefixCacheHits > 0) sr.prefixCacheHits.record(st.prefixCacheHits);
      if (st.numPreemptions > 0) sr.preemptions.record(st.numPreemptions);
      const sd = st.specDecoding;
      if (sd !== undefined) {
        // Recorded even at 0: the first record creates the series (vLLM has them from start-up
        // on a speculating engine; ours appear with its first stats).
        sr.specDrafts.record(sd.numDrafts);
        sr.specDraftTokens.record(sd.numDraftTokens);
        sr.specAcceptedTokens.record(sd.numAcceptedTokens);
        sd.numAcceptedTokensPerPos.forEach((n, i) => sr.specAcceptedPerPos(i).record(n));
      }
      this.logger?.recordStats(st);
      if (st.kvEvictionsDropped !== undefined) sr.kvEvictionsDropped.record(st.kvEvictionsDropped);
      if (st.detokenizerFlushes !== undefined) sr.detokenizerFlushes.record(st.detokenizerFlushes);
      const pf = st.perf;
      if (pf !== undefined) {
        sr.estimatedFlops.record(pf.flops);
        sr.estimatedReadBytes.record(pf.readBytes);
        sr.estimatedWriteBytes.record(pf.writeBytes);
      }
      const ev = st.kvEvictions;
      if (ev !== undefined) {
        for (const e of ev) {
          sr.kvBlockLifetime.record(e.lifetimeMs * S);
          sr.kvBlockIdleBeforeEvict.record(e.idleMs * S);
          for (const g of e.reuseGapsMs) sr.kvBlockReuseGap.record(g * S);
        }
      }
    }
  }

  /**
   * Finishes every unfinished sequence of every request with `reason` (the engine failed or
   * its worker is gone); each counts once in the success counter, like an engine-side finish.
   * The running, waiting and KV gauges go to 0.
   */
  failAll(reason: FinishReason): void {
    const now = this.nowMs();
    for (const req of [...this.requests.values()]) {
      req.seqs.forEach((seq, index) => {
        if (seq.finishReason === undefined)
          this.finish(
            req,
            seq,
            { requestId: req.requestId, index, newTokenIds: [], text: '', events: [], finishReason: reason },
            now,
          );
      });
    }
    this.requests.clear();
    // Nothing runs, waits or holds KV on it any more: its last stats must not stand until a
    // replacement's first ones (gateways route on these gauges).
    const sr = this.series;
    sr.running.record(0);
    sr.waiting.record(0);
    sr.waitingByReason.capacity.record(0);
    sr.kvCacheUsage.record(0);
    sr.gpuCacheUsage.record(0);
  }

  /** The engine goes to sleep (its worker is stopped: weights and KV cache discarded), or wakes. */
  setSleeping(asleep: boolean): void {
    this.series.sleepState.awake.record(asleep ? 0 : 1);
    this.series.sleepState.discard_all.record(asleep ? 1 : 0);
  }

  private finish(req: RequestState, seq: SequenceState, o: GenRequestOutput, now: number): void {
    const sr = this.series;
    const rid = req.requestId;
    const reason = o.finishReason as FinishReason;
    seq.finishReason = reason;
    sr.success[reason].record(1, rid);
    // Once per finished sequence, as vLLM counts a finished engine request with is_corrupted.
    if (o.corrupted === true) {
      sr.corruptedRequests.record(1, rid);
      this.logger?.recordCorrupted();
    }
    sr.e2e.record((now - req.arrivalMs) * S, rid);
    const gen = seq.numGenerationTokens;
    sr.requestGenerationTokens.record(gen, rid);
    // The prompt length of every finished sequence, with or without a token (vLLM observes each);
    // unknown only for a text prompt on an engine that died before reporting it.
    const prompt = o.numPromptTokens ?? seq.numPromptTokens ?? req.promptLen;
    if (prompt !== undefined) sr.requestPromptTokens.record(prompt, rid);
    // New K/V of its prefill: prompt minus cache hits; 0 when it was never prefilled.
    sr.requestPrefillKvComputedTokens.record(seq.numComputedPromptTokens ?? 0, rid);
    // Per child, as vLLM observes max_tokens for each finished engine request.
    sr.paramsMaxTokens.record(req.maxTokens, rid);
    const { queuedTs, scheduledTs, firstTokenTs, lastTokenTs } = seq;
    // The engine-clock intervals exist only for a sequence that produced a token.
    if (scheduledTs !== undefined && firstTokenTs !== undefined && lastTokenTs !== undefined) {
      const decode = lastTokenTs - firstTokenTs;
      if (queuedTs !== undefined) sr.queue.record((scheduledTs - queuedTs) * S, rid);
      sr.prefill.record((firstTokenTs - scheduledTs) * S, rid);
      sr.decode.record(decode * S, rid);
      sr.inference.record((lastTokenTs - scheduledTs) * S, rid);
      sr.tpot.record(gen > 1 ? (decode * S) / (gen - 1) : 0, rid);
    }
    req.finished++;
    if (gen > req.maxGenerationTokens) req.maxGenerationTokens = gen;
    if (req.finished === req.n) {
      this.finishedTimings.set(rid, timingsOf(req, now));
      sr.paramsN.record(req.n, rid);
      sr.maxNumGenerationTokens.record(req.maxGenerationTokens, rid);
      this.requests.delete(rid);
    }
  }
}

/** The longest phase of each kind over a request's sequences; 0 for phases none of them had. */
function timingsOf(req: RequestState, now: number): RequestTimings {
  let queueMs = 0;
  let prefillMs = 0;
  let decodeMs = 0;
  for (const q of req.seqs) {
    if (q.scheduledTs === undefined || q.firstTokenTs === undefined || q.lastTokenTs === undefined) continue;
    if (q.queuedTs !== undefined) queueMs = Math.max(queueMs, q.scheduledTs - q.queuedTs);
    prefillMs = Math.max(prefillMs, q.firstTokenTs - q.scheduledTs);
    decodeMs = Math.max(decodeMs, q.lastTokenTs - q.firstTokenTs);
  }
  return { queueMs, prefillMs, decodeMs, totalMs: now - req.arrivalMs };
}
