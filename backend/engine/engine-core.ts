/**
 * EngineCore: the continuous-batching loop body. `addRequest` queues (n sequences per request),
 * `step()` schedules, runs the model once, samples, and returns plain data (vLLM's
 * EngineCoreOutputs): per sequence its new tokens, text, events and finish; one NEW_TOKENS
 * timestamp for the step; scheduler stats (throttled, deltas kept). Online and offline front
 * doors drive this same class.
 */
import { performance } from 'node:perf_hooks';
import type {
  EngineCoreOutputs,
  GenRequestOutput,
  GenSamplingParams,
  GenSchedulerStats,
} from '../../schema/engine-ipc.js';
import { admitRequest, RequestRejected } from './admission.js';
import type { EngineConfig } from './config.js';
import { failedItems } from './failed-items.js';
import { KvCacheManager } from './kv-cache-manager.js';
import { KvResidency } from './kv-residency.js';
import type { ModelRunner, RunItem, RunResult } from './runner.js';
import { stepCost } from './model-cost.js';
import type { CostShapes } from './model-cost.js';
import { hasNaN, NO_TOKEN, prngFor } from './sampling.js';
import { Scheduler } from './scheduler.js';
import { Sequence } from './sequence.js';
import { SpecDecodingCounters, verifyDrafts } from './spec-decode.js';
import { StatsThrottle } from './stats.js';
import type { EvictionsTaken } from './stats.js';
import { sampleFor } from './token-sampler.js';
import type { EngineTokenizer } from './tokenizer.js';

/** The engine core of one generation worker. */
export class EngineCore {
  readonly kv: KvCacheManager;
  readonly scheduler: Scheduler;
  private readonly byRequest = new Map<string, Sequence[]>();
  /** Sequences finished outside a step (abort); reported by the next step. */
  private pendingFinished: Sequence[] = [];
  private nextSeqId = 0;
  private readonly throttle: StatsThrottle;
  /** Scheduler counters at the previous step (updated in place, once per step). */
  private readonly lastCounters = { q: 0, h: 0, p: 0 };
  private stepping = false;
  /** Aborts that arrived while a step was running (the runner's rows must not move mid-run). */
  private deferredAborts: string[] = [];
  private lastError: string | undefined;
  /** Speculative decoding counters since the last stats (null when speculation is off). */
  private readonly spec: SpecDecodingCounters | null;
  /** Sampled KV block residency (kvCacheMetricsSample > 0), else null. */
  readonly residency: KvResidency | null;
  private readonly drainEvictions: (() => EvictionsTaken) | undefined;
  /** The model's shapes for the MFU estimate (enableMfuMetrics), else null: no estimate at all. */
  private readonly costShapes: CostShapes | null;
  /** computeNansInLogits: every logits row is scanned for NaN. */
  private readonly scanNans: boolean;

  constructor(
    readonly config: EngineConfig,
    readonly runner: ModelRunner,
    readonly tokenizer: EngineTokenizer,
    random?: () => number,
  ) {
    if (config.speculative !== null && runner.multiLogits !== true) {
      throw new Error(
        'speculative_config (ngram) needs a model that returns logits for several positions: the fast KV layout with a num_logits input (regenerate tiny-lm with `tsserve models generate`)',
      );
    }
    this.spec = config.speculative === null ? null : new SpecDecodingCounters(config.speculative.numSpeculativeTokens);
    this.residency =
      config.kvCacheMetricsSample > 0
        ? new KvResidency(config.kvCacheMetricsSample, () => performance.now(), random)
        : null;
    const residency = this.residency;
    this.drainEvictions =
      residency === null ? undefined : () => ({ events: residency.drain(), dropped: residency.takeDropped() });
    this.kv = new KvCacheManager(
      config.numBlocks,
      config.blockSize,
      config.enablePrefixCaching,
      {
        numRowTokens: config.numRowTokens,
        minRow: config.rowGrowStep,
        maxModelLen: config.maxModelLen,
      },
      this.residency,
    );
    this.scheduler = new Scheduler(config, this.kv);
    this.scanNans = config.computeNansInLogits;
    const m = config.model;
    this.costShapes = config.enableMfuMetrics
      ? {
          vocabSize: m.vocabSize,
          hiddenSize: config.hiddenSize,
          intermediateSize: config.intermediateSize,
          numLayers: m.numLayers,
          numHeads: m.numHeads,
          headDim: m.headDim,
        }
      : null;
    this.throttle = new StatsThrottle(config.statsIntervalMs);
  }

  /** Queues a request (n sequences); throws RequestRejected when it can never run. */
  addRequest(requestId: string, prompt: string | readonly number[], params: GenSamplingParams = {}): void {
    if (this.byRequest.has(requestId)) throw new RequestRejected(`request ${requestId} is already in the engine`);
    const { ids, sp, stopRule } = admitRequest(this.config, this.kv, this.tokenizer, prompt, params);
    const now = performance.now();
    const seqs: Sequence[] = [];
    for (let i = 0; i < sp.n; i++) {
      const rng = prngFor(sp.seed, i);
      const decoder = this.tokenizer.streamDecoder(ids);
      const seq = new Sequence(requestId, i, this.nextSeqId++, ids, sp, rng, decoder, stopRule);
      seq.queuedTs = now;
      seq.events.push({ type: 'QUEUED', ts: now });
      seqs.push(seq);
    }
    this.byRequest.set(requestId, seqs);
    for (const s of seqs) this.scheduler.add(s);
  }

  /** Aborts every unfinished sequence of a request; the next step reports them. False if unknown. */
  abort(requestId: string): boolean {
    const seqs = this.byRequest.get(requestId);
    if (seqs === undefined) return false;
    if (this.stepping) {
      this.deferredAborts.push(requestId);
      return true;
    }
    for (const s of seqs) {
      if (s.status === 'finished') continue;
      this.scheduler.remove(s);
      this.runner.release(s.seqId);
      s.finish('abort');
      this.pendingFinished.push(s);
    }
    return true;
  }

  /** True while a step has something to do or report. */
  hasWork(): boolean {
    return this.scheduler.hasWork() || this.pendingFinished.length > 0;
  }

  /** Number of requests (not sequences) in the engine. */
  get numRequests(): number {
    return this.byRequest.size;
  }

  /**
   * Runs one engine step. One loop drives an engine: a call while a step is running is refused
   * (the runner's rows and the plan belong to the running step).
   */
  async step(): Promise<EngineCoreOutputs> {
    if (this.stepping) throw new Error('EngineCore.step() is already running: one loop must drive the engine');
    this.stepping = true;
    try {
      return await this.stepInner();
    } finally {
      this.stepping = false;
      const aborts = this.deferredAborts;
      this.deferredAborts = [];
      for (const id of aborts) this.abort(id);
    }
  }

  /** True while `step()` runs. */
  get isStepping(): boolean {
    return this.stepping;
  }

  private async stepInner(): Promise<EngineCoreOutputs> {
    const plan = this.scheduler.schedule(performance.now());
    for (const p of plan.preempted) this.runner.release(p.seqId);
    const registered = this.kv.takeRegistered();
    const items: RunItem[] = plan.items.map((it) =>
      it.drafts === undefined
        ? {
            seqId: it.seq.seqId,
            tokens: it.seq.tokens,
            start: it.start,
            count: it.count,
            blockTable: it.seq.blockTable,
            wantLogits: it.start + it.count === it.seq.tokens.length,
            reserve: it.seq.reserve,
            rowCapacity: this.kv.rowCapacity(it.seq),
          }
        : {
            // A verify: the last token and the drafts, one run, logits after each of them.
            seqId: it.seq.seqId,
            tokens: [...it.seq.tokens, ...it.drafts],
            start: it.start,
            count: it.count,
            blockTable: it.seq.blockTable,
            wantLogits: true,
            numLogits: it.count,
            reserve: it.seq.reserve,
            rowCapacity: this.kv.rowCapacity(it.seq),
          },
    );
    let results: RunResult[] = [];
    // Every item the step runs is estimated, a failed run's too (its work was attempted).
    if (this.costShapes !== null && items.length > 0) this.throttle.addCost(stepCost(this.costShapes, items));
    if (items.length > 0) {
      try {
        results = await this.runner.run(items);
      } catch (err) {
        // A runner that throws instead of reporting per item: every item of the step failed.
        const e = err instanceof Error ? err : new Error(String(err));
        results = items.map(() => e);
      }
    }
    const failed = failedItems(plan.items, results, registered, this.config.blockSize);
    const sampled: Sequence[] = [];
    /** Tokens emitted by each verify (accepted drafts and the bonus), in `sampled` order. */
    const emittedOf = new Map<Sequence, number[]>();
    const errored: Sequence[] = [];
    /** Sequences whose logits left nothing to sample (all -Infinity or NaN): they alone fail. */
    const unsampled: Sequence[] = [];
    let promptTokens = 0;
    for (let i = 0; i < plan.items.length; i++) {
      const it = plan.items[i]!;
      const seq = it.seq;
      if (seq.status !== 'running') continue;
      if (failed[i] !== undefined) {
        seq.finish('error');
        errored.push(seq);
        continue;
      }
      if (it.drafts !== undefined) {
        // The raw rows, before any processor: all the verify's positions.
        if (this.scanNans && hasNaN(results[i] as Float32Array)) seq.corrupted = true;
        const v = verifyDrafts(
          seq,
          it.drafts,
          results[i] as Float32Array,
          this.config.model.vocabSize,
          (l) => sampleFor(seq, l),
          this.config.maxModelLen,
        );
        this.spec!.observe(it.drafts.length, v.accepted);
        if (v.unsampled) {
          seq.finish('error');
          unsampled.push(seq);
          continue;
        }
        // The last token and the accepted drafts are computed; rejected slots are given back.
        seq.numComputed += 1 + v.accepted;
        if (seq.status === 'running') this.kv.trim(seq);
        this.kv.cacheComputed(seq);
        emittedOf.set(seq, v.emitted);
        sampled.push(seq);
        continue;
      }
      seq.numComputed += it.count;
      if (it.isPrefill) promptTokens += it.count;
      this.kv.cacheComputed(seq);
      const l = results[i];
      if (!items[i]!.wantLogits || !(l instanceof Float32Array)) continue;
      // The model's row as it came, before the processors write -Infinity into it.
      if (this.scanNans && hasNaN(l)) seq.corrupted = true;
      const token = sampleFor(seq, l);
      if (token === NO_TOKEN) {
        // Never appended: a -1 in the next run's input ids fails the run of every sequence in it.
        seq.finish('error');
        unsampled.push(seq);
        continue;
      }
      seq.inPrefill = false;
      seq.append(token, this.config.maxModelLen);
      sampled.push(seq);
    }
    const ts = performance.now();
    const outputs: GenRequestOutput[] = [];
    let genTokens = 0;
    for (const seq of errored) outputs.push(this.outputOf(seq, []));
    for (const seq of unsampled) outputs.push(this.outputOf(seq, []));
    for (const seq of sampled) {
      if (seq.firstTokenTs < 0) seq.firstTokenTs = ts;
      seq.lastTokenTs = ts;
      const emitted = emittedOf.get(seq);
      genTokens += emitted === undefined ? 1 : emitted.length;
      outputs.push(this.outputOf(seq, emitted ?? [seq.tokens[seq.tokens.length - 1]!]));
    }
    for (const seq of this.pendingFinished) outputs.push(this.outputOf(seq, []));
    this.pendingFinished = [];
    if (errored.length > 0) {
      const msgs = [...new Set(failed.filter((f) => f !== undefined))];
      this.lastError = `model run failed: ${msgs.join('; ')} (requests ${[...new Set(errored.map((q) => q.requestId))].join(', ')} finished with error)`;
    }
    const c = this.scheduler.counters;
    this.throttle.add(
      c.prefixQueries - this.lastCounters.q,
      c.prefixHits - this.lastCounters.h,
      c.preemptions - this.lastCounters.p,
    );
    this.lastCounters.q = c.prefixQueries;
    this.lastCounters.h = c.prefixHits;
    this.lastCounters.p = c.preemptions;
    let stats: GenSchedulerStats | undefined = this.config.disableLogStats
      ? undefined
      : this.throttle.take(
          ts,
          {
            numRunning: this.scheduler.running.length,
            numWaiting: this.scheduler.waiting.length,
            kvCacheUsage: this.kv.usage(),
          },
          // Idle after this step (aborts arriving mid-step aside): send stats so gauges settle at 0.
          !this.hasWork() && this.deferredAborts.length === 0,
          this.drainEvictions,
        );
    if (stats !== undefined && this.spec !== null) stats = { ...stats, specDecoding: this.spec.take() };
    // Two literals rather than a spread: cloning the object was a measurable part of the step.
    return stats === undefined
      ? { timestamp: ts, outputs, numPromptTokens: promptTokens, numGenerationTokens: genTokens }
      : { timestamp: ts, outputs, numPromptTokens: promptTokens, numGenerationTokens: genTokens, stats };
  }

  /** The message of the last failed model run (its sequences finished with `error`), once. */
  takeError(): string | undefined {
    const e = this.lastError;
    this.lastError = undefined;
    return e;
  }

  private outputOf(seq: Sequence, newTokenIds: number[]): GenRequestOutput {
    const o: { -readonly [K in keyof GenRequestOutput]: GenRequestOutput[K] } = {
      requestId: seq.requestId,
      index: seq.index,
      newTokenIds,
      text: seq.takeText(),
      events: seq.takeEvents(),
    };
    if (seq.params.logprobs !== undefined && newTokenIds.length > 0) o.logprobs = seq.takeLogprobs();
    if (!seq.prefillSent && seq.prefill !== undefined && newTokenIds.length > 0) {
      o.prefill = seq.prefill;
      seq.prefillSent = true;
    }
    if (seq.finishReason !== undefined) {
      o.finishReason = seq.finishReason;
      if (seq.stopReason !== undefined) o.stopReason = seq.stopReason;
      o.numGenerationTokens = seq.numOutput;
      o.numPromptTokens = seq.promptLen;
      if (seq.corrupted) o.corrupted = true;
      if (seq.firstTokenTs >= 0) {
        o.timings = {
          queueMs: seq.firstScheduledTs - seq.queuedTs,
          prefillMs: seq.firstTokenTs - seq.firstScheduledTs,
          decodeMs: seq.lastTokenTs - seq.firstTokenTs,
          inferenceMs: seq.lastTokenTs - seq.firstScheduledTs,
        };
      }
      this.retire(seq);
    }
    return o;
  }

  private retire(seq: Sequence): void {
    if (seq.status !== 'finished') return;
    this.throttle.addFlushes(seq.detokenizerFlushes);
    this.scheduler.remove(seq);
    this.runner.release(seq.seqId);
    const seqs = this.byRequest.get(seq.requestId);
    if (seqs !== undefined && seqs.every((s) => s.finishReason !== undefined)) this.byRequest.delete(seq.requestId);
  }
}
