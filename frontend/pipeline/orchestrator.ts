/**
 * Moves each request of a pipeline through its stages (vLLM-Omni's Orchestrator): binds it to
 * one replica per stage (the least loaded when it starts, then sticky), forwards the thinker's
 * tokens to the code2wav replica in chunks of `chunkTokens` as they are produced (the vocoder
 * starts before the thinker finishes), hands audio back in order, and ends the request once:
 * on completion, on a client abort (every stage is cancelled), or on an error in any stage
 * (the other stages are cancelled). Every record goes to the pipeline, audio and transfer
 * families and to the logging aggregator from the same data.
 */
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import type { FinishReason, GenRequestOutput } from '../../schema/engine-ipc.js';
import type { FromVocoderMessage, VocoderChunkMessage, VocoderRejectReason } from '../../schema/vocoder-ipc.js';
import { epochNowMs } from '../../schema/vocoder-ipc.js';
import type { GenerationHandle, GenerationModel } from '../generation/generation-model.js';
import type { PipelineAggregator, RequestTrace } from './aggregator.js';
import type { AudioMetrics } from './audio-metrics.js';
import type { PipelineMetrics } from './pipeline-metrics.js';
import type { TransferMetrics } from './transfer-metrics.js';
import { InferenceCount } from '../models/inference-count.js';
import type { StageLoad } from './stage-load.js';
import type { ModelSeries } from '../models/frontend-series.js';
import { leastLoaded } from './least-loaded.js';
import { pcm16Seconds, worstUnderrunSec } from './underrun.js';
import type { SpeakHandle, SpeakRequest, SpeakSink } from './speak.js';
import type { VocoderStage } from './vocoder-stage.js';
import type { BoundSeries } from '../../schema/metrics-api.js';

/** What the orchestrator works with. */
export interface OrchestratorParts {
  readonly modelName: string;
  readonly thinker: GenerationModel;
  readonly thinkerStage: string;
  readonly vocoder: VocoderStage;
  readonly vocoderStage: string;
  readonly chunkTokens: number;
  readonly sampleRate: number;
  readonly pipeline: PipelineMetrics;
  readonly audio: AudioMetrics;
  readonly transfer: TransferMetrics;
  readonly aggregator: PipelineAggregator;
  /** `tsserve_requests_refused_total{reason="queue_full"}` of the pipeline (a full code2wav stage). */
  readonly refused: BoundSeries;
  /** The pipeline's TorchServe series (`ts_inference_requests_total`, …): one count per request. */
  readonly inference?: ModelSeries;
  /** In-flight requests per stage replica (`ts_omni_stage_inflight_requests`). */
  readonly stageLoad?: StageLoad;
}

/** Drives every request of one pipeline. */
export class Orchestrator {
  private running = 0;
  private waiting = 0;

  constructor(private readonly p: OrchestratorParts) {}

  /** Requests admitted and not finished. */
  get inFlight(): number {
    return this.running + this.waiting;
  }

  /** Requests started so far: where ties between equally loaded replicas start looking. */
  private turn = 0;

  /** Counts of the gauges (running: the thinker has produced output). */
  counts(): { readonly running: number; readonly waiting: number } {
    return { running: this.running, waiting: this.waiting };
  }

  /** Starts a request, or says why it cannot start (503: a stage has no replica up). */
  start(req: SpeakRequest, sink: SpeakSink): SpeakHandle | { readonly status: number; readonly message: string } {
    const p = this.p;
    const turn = this.turn++;
    const thinkerReplica = leastLoaded(
      p.thinker.engines().map((e) => [e.index, e.load]),
      turn,
    );
    const vocoderReplica = leastLoaded(
      p.vocoder.replicas().map((i) => [i, p.vocoder.load(i)]),
      turn,
    );
    if (thinkerReplica === null || vocoderReplica === null) {
      return {
        status: 503,
        message: `model ${p.modelName}: stage ${thinkerReplica === null ? p.thinkerStage : p.vocoderStage} has no replica ready`,
      };
    }
    // The thinker's engines bound their own queues; the code2wav replicas, which /v1/audio/speech
    // reaches without the thinker, take as many (--job-queue-size per replica).
    const held = p.vocoder.load(vocoderReplica);
    if (held >= p.thinker.capacity) {
      p.refused.record(1);
      return {
        status: 503,
        message: `model ${p.modelName}: stage ${p.vocoderStage} has ${held} request${held === 1 ? '' : 's'} in flight on its least loaded replica, the most one holds (--job-queue-size ${p.thinker.capacity}); retry later`,
      };
    }
    const run = new PipelineRun(
      this,
      p,
      req.requestId ?? `${p.modelName}-${randomUUID()}`,
      req,
      sink,
      thinkerReplica,
      vocoderReplica,
    );
    return run.begin();
  }

  /** A run was admitted (waiting until the thinker's first output). */
  admitted(): void {
    this.waiting++;
    this.p.pipeline.setCounts(this.running, this.waiting);
  }

  /** A run's thinker produced its first output. */
  promoted(): void {
    this.waiting--;
    this.running++;
    this.p.pipeline.setCounts(this.running, this.waiting);
  }

  /** A run ended (`wasRunning`: it had been promoted). */
  ended(wasRunning: boolean): void {
    if (wasRunning) this.running--;
    else this.waiting--;
    this.p.pipeline.setCounts(this.running, this.waiting);
    if (this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private readonly idleWaiters: (() => void)[] = [];

  /** Resolves once no request is in flight. */
  whenIdle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}

/** One request's way through the stages. */
class PipelineRun {
  private thinkerHandle: GenerationHandle | null = null;
  private buffer: number[] = [];
  private nextSeq = 0;
  private audioSeq = 0;
  private thinkerDone = false;
  private thinkerReason: FinishReason = 'stop';
  private done = false;
  private promoted = false;
  private frames = 0;
  private computeMs = 0;
  private transcript = '';
  private promptTokens = 0;
  private completionTokens = 0;
  private cachedTokens = 0;
  private stopReason: string | number | null = null;
  /** Per audio chunk: frontend monotonic arrival (s) and playable length (s), for the player simulation. */
  private readonly chunkArrivalsSec: number[] = [];
  private readonly chunkSeconds: number[] = [];
  private readonly trace: RequestTrace;
  private readonly count: InferenceCount;

  constructor(
    private readonly orch: Orchestrator,
    private readonly p: OrchestratorParts,
    readonly requestId: string,
    private readonly req: SpeakRequest,
    private readonly sink: SpeakSink,
    private readonly thinkerReplica: number,
    private readonly vocoderReplica: number,
  ) {
    this.trace = p.aggregator.newTrace(requestId, req.arrivalMs, thinkerReplica, vocoderReplica);
    this.count = new InferenceCount(p.inference, req.arrivalMs);
  }

  begin(): SpeakHandle | { readonly status: number; readonly message: string } {
    const p = this.p;
    const bound = p.vocoder.bind(this.vocoderReplica, this.requestId, {
      onMessage: (m) => this.onVocoder(m),
      onReplicaGone: (status, why) => this.fail(status, `${p.vocoderStage}: ${why}`, null),
    });
    if (!bound)
      return {
        status: 503,
        message: `model ${p.modelName}: ${p.vocoderStage} replica ${this.vocoderReplica} is not reachable`,
      };
    const codes = this.req.codes;
    if (codes !== undefined) {
      this.orch.admitted();
      this.admitted();
      const handle = { requestId: this.requestId, abort: (): void => this.abort() };
      this.onThinker({
        requestId: this.requestId,
        index: 0,
        newTokenIds: codes,
        text: '',
        events: [],
        finishReason: 'stop',
      });
      return handle;
    }
    const started = p.thinker.generate(
      { prompt: this.req.prompt, params: this.req.params, arrivalMs: this.req.arrivalMs, engine: this.thinkerReplica },
      {
        onOutput: (o) => this.onThinker(o),
        onError: (status, message) => this.fail(status, `${p.thinkerStage}: ${message}`, null),
        onTimings: (t) => this.count.queued(t.queueMs),
      },
    );
    if ('status' in started) {
      p.vocoder.release(this.requestId, false);
      return started;
    }
    this.thinkerHandle = started;
    this.orch.admitted();
    this.admitted();
    return { requestId: this.requestId, abort: () => this.abort() };
  }

  private onThinker(o: GenRequestOutput): void {
    if (this.done) return;
    if (!this.promoted) {
      this.promoted = true;
      this.trace.thinkerFirstMs = performance.now();
      this.orch.promoted();
    }
    if (o.prefill !== undefined) {
      this.promptTokens = o.prefill.numPromptTokens;
      this.cachedTokens = o.prefill.numCachedTokens;
    }
    this.completionTokens += o.newTokenIds.length;
    // A thinker that stops on EOS or a stop token id ends with that token: it is counted (usage,
    // as vLLM counts it) but not spoken, as it is not in the transcript either.
    const stopToken =
      this.req.codes === undefined &&
      o.finishReason === 'stop' &&
      (o.stopReason === undefined || typeof o.stopReason === 'number');
    const spoken = stopToken ? o.newTokenIds.length - 1 : o.newTokenIds.length;
    for (let i = 0; i < spoken; i++) this.buffer.push(o.newTokenIds[i]!);
    if (o.text !== '') {
      this.transcript += o.text;
      this.sink.onText(o.text);
    }
    while (this.buffer.length >= this.p.chunkTokens) this.sendChunk(this.buffer.splice(0, this.p.chunkTokens));
    if (o.finishReason === undefined) return;
    this.thinkerDone = true;
    this.thinkerHandle = null;
    this.trace.thinkerDoneMs = performance.now();
    if (o.finishReason === 'abort' || o.finishReason === 'error') {
      this.fail(500, `${this.p.thinkerStage} finished with ${o.finishReason}`, null, o.finishReason);
      return;
    }
    this.thinkerReason = o.finishReason;
    this.stopReason = o.stopReason ?? null;
    if (this.buffer.length > 0) this.sendChunk(this.buffer.splice(0));
    if (this.nextSeq === 0) {
      this.fail(
        500,
        `${this.p.vocoderStage} rejected the request: the ${this.p.thinkerStage} produced no codec tokens`,
        'no_codec_tokens',
      );
      return;
    }
    this.maybeComplete();
  }

  private sendChunk(tokens: number[]): void {
    const t0 = performance.now();
    const codes = Int32Array.from(tokens);
    const seq = this.nextSeq++;
    const msg: VocoderChunkMessage = { type: 'tsserve.voc.chunk', requestId: this.requestId, seq, codes };
    const ok = this.p.vocoder.send(this.requestId, msg);
    // Sender done: tx ends here (frontend monotonic); in flight starts here (epoch, compared with the worker's epoch reading).
    const txSec = (performance.now() - t0) / 1000;
    const sentEpochMs = epochNowMs();
    if (!ok) {
      // The replica's channel closed under a bound request: its worker is exiting (the exit
      // itself may be heard a moment later), so this is the dead-worker 500, not an overload 503.
      if (this.p.vocoder.isStopping)
        this.fail(503, `${this.p.vocoderStage}: model ${this.p.modelName} was stopped`, null);
      else
        this.fail(
          500,
          `${this.p.vocoderStage} replica ${this.vocoderReplica} is not reachable: its worker is gone`,
          null,
        );
      return;
    }
    if (this.req.codes !== undefined) return;
    this.p.transfer.sent(this.thinkerReplica, this.vocoderReplica, codes.byteLength, txSec);
    this.trace.hops.push({ seq, bytes: codes.byteLength, txMs: txSec * 1000, rxMs: NaN, inFlightMs: NaN, sentEpochMs });
  }

  private onVocoder(m: FromVocoderMessage): void {
    if (this.done) return;
    if (m.type === 'tsserve.voc.error') {
      // The codes of /v1/audio/speech are the client's input (400); a chat's came from the thinker (500).
      this.fail(
        this.req.codes !== undefined && m.reason === 'invalid_codec_token' ? 400 : 500,
        `${this.p.vocoderStage} rejected the request: ${m.message}`,
        m.reason,
      );
      return;
    }
    if (m.seq !== this.audioSeq) return; // chunks of one replica arrive in order; anything else is stale
    this.audioSeq++;
    const now = performance.now();
    const hop = this.trace.hops[m.seq];
    // Two epoch readings of one host's processes; a delivery faster than the sender's own return
    // from post() can read a few µs negative, which is clamped to 0 (docs/pipelines.md, "Clocks").
    const inFlightMs = Math.max(0, m.rxStartEpochMs - (hop?.sentEpochMs ?? m.rxStartEpochMs));
    if (this.req.codes === undefined)
      this.p.transfer.received(this.thinkerReplica, this.vocoderReplica, m.rxMs / 1000, inFlightMs / 1000);
    if (hop !== undefined) {
      hop.rxMs = m.rxMs;
      hop.inFlightMs = inFlightMs;
    }
    // The first chunk with frames is the first audio a listener hears; an empty one before it
    // would otherwise observe the time to first packet again at the next chunk.
    if (this.frames === 0 && m.frames > 0) {
      this.trace.firstAudioMs = now;
      this.p.audio.firstPacket(this.vocoderReplica, (now - this.req.arrivalMs) / 1000);
    }
    this.frames += m.frames;
    this.computeMs += m.computeMs;
    this.chunkArrivalsSec.push(now / 1000);
    this.chunkSeconds.push(pcm16Seconds(m.pcm.byteLength, this.p.sampleRate));
    this.sink.onAudio(m.pcm);
    this.maybeComplete();
  }

  private maybeComplete(): void {
    if (this.done || !this.thinkerDone || this.audioSeq < this.nextSeq) return;
    const p = this.p;
    p.audio.finalize(this.vocoderReplica, this.frames, p.sampleRate, this.computeMs / 1000);
    if (this.req.streamed) {
      p.audio.streamed(
        this.vocoderReplica,
        worstUnderrunSec(this.chunkArrivalsSec.map((a, i) => ({ arrivalSec: a, durationSec: this.chunkSeconds[i]! }))),
      );
    }
    this.finish(this.thinkerReason, false);
    this.sink.onDone({
      finishReason: this.thinkerReason,
      transcript: this.transcript,
      frames: this.frames,
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      cachedTokens: this.cachedTokens,
      stopReason: this.stopReason,
    });
  }

  private abort(): void {
    if (this.done) return;
    this.finish('abort', true);
  }

  /** A stage failed (or rejected the input: `skip` names why): every other stage is cancelled. */
  private fail(
    status: number,
    message: string,
    skip: VocoderRejectReason | null,
    reason: FinishReason = 'error',
  ): void {
    if (this.done) return;
    if (skip !== null) this.p.audio.skipped(this.vocoderReplica, skip);
    this.finish(reason, true);
    this.sink.onError(status, message);
  }

  private finish(reason: FinishReason, cancel: boolean): void {
    this.done = true;
    if (cancel && this.thinkerHandle !== null) this.thinkerHandle.abort();
    this.thinkerHandle = null;
    this.p.vocoder.release(this.requestId, cancel);
    const now = performance.now();
    this.p.pipeline.finished(reason, (now - this.req.arrivalMs) / 1000, this.promptTokens, this.completionTokens);
    this.trace.endMs = now;
    this.trace.reason = reason;
    this.trace.frames = this.frames;
    this.p.aggregator.finished(this.trace);
    this.orch.ended(this.promoted);
    this.count.end();
    this.p.stageLoad?.add(this.p.thinkerStage, this.thinkerReplica, -1);
    this.p.stageLoad?.add(this.p.vocoderStage, this.vocoderReplica, -1);
  }

  /** Counted once admitted, and bound to one replica of each stage until it ends. */
  private admitted(): void {
    this.count.admitted();
    this.p.stageLoad?.add(this.p.thinkerStage, this.thinkerReplica, 1);
    this.p.stageLoad?.add(this.p.vocoderStage, this.vocoderReplica, 1);
  }
}
