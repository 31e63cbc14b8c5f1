/**
 * The Orchestrator over a fake thinker and a fake code2wav stage (the real metric families, stage
 * load and aggregator record into a recording metrics cache): how a request moves through the
 * stages, which replicas it is bound to, when it is refused, how a failing stage ends it, and
 * what each ending records.
 */
import { expect } from 'chai';
import { Orchestrator } from '../../../frontend/pipeline/orchestrator.js';
import type { OrchestratorParts } from '../../../frontend/pipeline/orchestrator.js';
import { PipelineAggregator } from '../../../frontend/pipeline/aggregator.js';
import type { RequestTrace } from '../../../frontend/pipeline/aggregator.js';
import { AudioMetrics } from '../../../frontend/pipeline/audio-metrics.js';
import { PipelineMetrics } from '../../../frontend/pipeline/pipeline-metrics.js';
import { TransferMetrics } from '../../../frontend/pipeline/transfer-metrics.js';
import { StageLoad } from '../../../frontend/pipeline/stage-load.js';
import type { SpeakHandle, SpeakRequest, SpeakResult, SpeakSink } from '../../../frontend/pipeline/speak.js';
import type { VocoderListener, VocoderStage } from '../../../frontend/pipeline/vocoder-stage.js';
import type { GenerateRequest, GenerationModel } from '../../../frontend/generation/generation-model.js';
import type { GenerationSink } from '../../../frontend/generation/generation-engine.js';
import type { GenRequestOutput } from '../../../schema/engine-ipc.js';
import type { VocoderChunkMessage, VocoderRejectReason } from '../../../schema/vocoder-ipc.js';
import type { BoundSeries } from '../../../schema/metrics-api.js';
import type { MetricsPort } from '../../../frontend/models/metrics-port.js';

const SAMPLE_RATE = 24000;

/** Every record by series, the key `name{label=value,…}` with the labels sorted, model_name left out. */
class Recorder {
  readonly values = new Map<string, number[]>();

  get(name: string): { bind(dims?: Readonly<Record<string, string>>): BoundSeries } {
    return {
      bind: (dims = {}) => {
        const labels = Object.keys(dims)
          .filter((k) => k !== 'model_name')
          .sort()
          .map((k) => `${k}=${dims[k]}`)
          .join(',');
        const key = `${name}{${labels}}`;
        return { record: (v: number) => this.values.set(key, [...(this.values.get(key) ?? []), v]) };
      },
    };
  }

  of(key: string): readonly number[] {
    return this.values.get(key) ?? [];
  }
}

/** One generate() call the fake thinker took. */
interface ThinkerRun {
  readonly req: GenerateRequest;
  readonly sink: GenerationSink;
  aborts: number;
}

/** The thinker: engines with set loads; generate() records the call, or refuses when told to. */
class FakeThinker {
  capacity = 2;
  loads: number[] = [0, 0];
  refusal: { status: number; message: string } | null = null;
  readonly runs: ThinkerRun[] = [];

  engines(): { index: number; load: number }[] {
    return this.loads.map((load, index) => ({ index, load }));
  }

  generate(
    req: GenerateRequest,
    sink: GenerationSink,
  ): { requestId: string; abort(): void } | { status: number; message: string } {
    if (this.refusal !== null) return this.refusal;
    const run: ThinkerRun = { req, sink, aborts: 0 };
    this.runs.push(run);
    return { requestId: `engine-${this.runs.length}`, abort: () => run.aborts++ };
  }
}

/** The code2wav stage: replicas up by index, each request's listener, every chunk sent and release. */
class FakeVocoder {
  up: number[] = [0, 1];
  /** Load held on a replica besides the requests bound here. */
  extra: number[] = [0, 0];
  bindable = true;
  reachable = true;
  isStopping = false;
  readonly bound = new Map<string, { replica: number; listener: VocoderListener }>();
  readonly sent: VocoderChunkMessage[] = [];
  readonly released: [string, boolean][] = [];

  replicas(): number[] {
    return this.up;
  }

  load(i: number): number {
    if (!this.up.includes(i)) return Infinity;
    return (this.extra[i] ?? 0) + [...this.bound.values()].filter((b) => b.replica === i).length;
  }

  bind(i: number, requestId: string, listener: VocoderListener): boolean {
    if (!this.bindable) return false;
    this.bound.set(requestId, { replica: i, listener });
    return true;
  }

  send(requestId: string, chunk: VocoderChunkMessage): boolean {
    if (!this.reachable || !this.bound.has(requestId)) return false;
    this.sent.push(chunk);
    return true;
  }

  release(requestId: string, cancel: boolean): void {
    this.released.push([requestId, cancel]);
    this.bound.delete(requestId);
  }

  /** The worker answers chunk `seq` of `requestId` with `frames` frames (computed in `computeMs`). */
  audio(
    requestId: string,
    seq: number,
    frames: number,
    extra: { rxStartEpochMs?: number; computeMs?: number } = {},
  ): void {
    this.bound.get(requestId)!.listener.onMessage({
      type: 'tsserve.voc.audio',
      requestId,
      seq,
      pcm: new Uint8Array(frames * 2),
      frames,
      rxStartEpochMs: extra.rxStartEpochMs ?? 0,
      rxMs: 0.5,
      computeMs: extra.computeMs ?? 100,
    });
  }

  reject(requestId: string, reason: VocoderRejectReason): void {
    this.bound
      .get(requestId)!
      .listener.onMessage({ type: 'tsserve.voc.error', requestId, seq: 0, reason, message: `bad ${reason}` });
  }
}

/** The aggregator, keeping every trace it made (readable before the request ends). */
class KeepingAggregator extends PipelineAggregator {
  readonly traces: RequestTrace[] = [];
  readonly tables: string[] = [];

  override newTrace(
    requestId: string,
    arrivalMs: number,
    thinkerReplica: number,
    vocoderReplica: number,
  ): RequestTrace {
    const t = super.newTrace(requestId, arrivalMs, thinkerReplica, vocoderReplica);
    this.traces.push(t);
    return t;
  }
}

/** What a sink heard. */
interface Heard {
  readonly text: string[];
  readonly audio: number[];
  done: SpeakResult | null;
  errors: [number, string][];
}

function sink(): { sink: SpeakSink; heard: Heard } {
  const heard: Heard = { text: [], audio: [], done: null, errors: [] };
  return {
    heard,
    sink: {
      onText: (t) => heard.text.push(t),
      onAudio: (pcm) => heard.audio.push(pcm.byteLength),
      onDone: (r) => (heard.done = r),
      onError: (s, m) => heard.errors.push([s, m]),
    },
  };
}

function setup(chunkTokens = 3): {
  orch: Orchestrator;
  thinker: FakeThinker;
  vocoder: FakeVocoder;
  rec: Recorder;
  agg: KeepingAggregator;
} {
  const rec = new Recorder();
  // The families read only bind() of a metric (not its spec).
  const metrics = rec as unknown as Pick<MetricsPort, 'get'>;
  const thinker = new FakeThinker();
  const vocoder = new FakeVocoder();
  let orch: Orchestrator | null = null;
  const agg = new KeepingAggregator('tiny-omni', ['thinker', 'code2wav'], SAMPLE_RATE, null, () => orch!.counts());
  const parts: OrchestratorParts = {
    modelName: 'tiny-omni',
    thinker: thinker as unknown as GenerationModel,
    thinkerStage: 'thinker',
    vocoder: vocoder as unknown as VocoderStage,
    vocoderStage: 'code2wav',
    chunkTokens,
    sampleRate: SAMPLE_RATE,
    pipeline: new PipelineMetrics(metrics, 'tiny-omni', true),
    audio: new AudioMetrics(metrics, 'tiny-omni', 'code2wav', true),
    transfer: new TransferMetrics(metrics, 'tiny-omni', 'thinker', 'code2wav', true),
    aggregator: agg,
    refused: rec.get('tsserve_requests_refused_total').bind({ reason: 'queue_full' }),
    inference: {
      requests: rec.get('ts_inference_requests_total').bind(),
      latencyUs: rec.get('ts_inference_latency_microseconds').bind(),
      queueUs: rec.get('ts_queue_latency_microseconds').bind(),
    },
    stageLoad: new StageLoad(metrics, 'tiny-omni', true),
  };
  orch = new Orchestrator(parts);
  return { orch, thinker, vocoder, rec, agg };
}

function chat(extra: Partial<SpeakRequest> = {}): SpeakRequest {
  return { prompt: 'hello', params: { max_tokens: 16 }, arrivalMs: performance.now(), streamed: false, ...extra };
}

function out(tokens: number[], extra: Partial<GenRequestOutput> = {}): GenRequestOutput {
  return { requestId: 'engine-1', index: 0, newTokenIds: tokens, text: '', events: [], ...extra };
}

function started(h: ReturnType<Orchestrator['start']>): SpeakHandle {
  if ('status' in h) throw new Error(`refused: ${h.status} ${h.message}`);
  return h;
}

describe('Orchestrator', () => {
  it("should forward the thinker's tokens in chunks as they come, speak all but the EOS token, and finish once every chunk's audio is back", () => {
    const { orch, thinker, vocoder } = setup(3);
    const s = sink();
    const h = started(orch.start(chat({ requestId: 'r1' }), s.sink));
    expect(h.requestId).to.equal('r1');
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([10, 11], { text: 'he', prefill: { numPromptTokens: 7, numCachedTokens: 4 } as never }));
    expect(vocoder.sent.length).to.equal(0); // 2 < chunkTokens
    t.sink.onOutput(out([12, 13], { text: 'llo' }));
    // The vocoder starts before the thinker finishes: the first full chunk goes out now.
    expect(vocoder.sent.map((c) => [c.requestId, c.seq, [...c.codes]])).to.deep.equal([['r1', 0, [10, 11, 12]]]);
    vocoder.audio('r1', 0, 2400);
    t.sink.onOutput(out([14, 2], { finishReason: 'stop' })); // 2 is EOS: counted, not spoken
    expect(vocoder.sent.map((c) => [c.seq, [...c.codes]])).to.deep.equal([
      [0, [10, 11, 12]],
      [1, [13, 14]],
    ]);
    expect(s.heard.done).to.equal(null); // chunk 1's audio is not back yet
    vocoder.audio('r1', 1, 1200);
    expect(s.heard).to.deep.equal({
      text: ['he', 'llo'],
      audio: [4800, 2400],
      done: {
        finishReason: 'stop',
        transcript: 'hello',
        frames: 3600,
        promptTokens: 7,
        completionTokens: 6,
        cachedTokens: 4,
        stopReason: null,
      },
      errors: [],
    });
    expect(vocoder.released).to.deep.equal([['r1', false]]);
    expect([t.aborts, orch.inFlight]).to.deep.equal([0, 0]);
  });

  it('should record running/waiting, the finish, tokens, audio, transfers, stage load and the TorchServe count of a completed request', () => {
    const { orch, thinker, vocoder, rec, agg } = setup(2);
    started(orch.start(chat({ requestId: 'r1' }), sink().sink));
    expect(orch.counts()).to.deep.equal({ running: 0, waiting: 1 });
    const t = thinker.runs[0]!;
    t.sink.onTimings!({ queueMs: 1.5 } as never);
    t.sink.onOutput(out([10, 11], { prefill: { numPromptTokens: 5, numCachedTokens: 0 } as never }));
    expect(orch.counts()).to.deep.equal({ running: 1, waiting: 0 });
    const sentEpochMs = agg.traces[0]!.hops[0]!.sentEpochMs;
    vocoder.audio('r1', 0, 12000, { rxStartEpochMs: sentEpochMs + 2, computeMs: 250 });
    t.sink.onOutput(out([12, 2], { finishReason: 'stop' }));
    vocoder.audio('r1', 1, 12000, { rxStartEpochMs: 0, computeMs: 250 }); // an earlier epoch reading: clamped to 0
    expect(rec.of('ts_omni_num_requests_running{}')).to.deep.equal([0, 0, 1, 0]);
    expect(rec.of('ts_omni_num_requests_waiting{}')).to.deep.equal([0, 1, 0, 0]);
    expect(rec.of('ts_omni_requests_success_total{finished_reason=stop}')).to.deep.equal([0, 1]);
    expect(rec.of('ts_omni_requests_success_total{finished_reason=error}')).to.deep.equal([0]);
    expect(rec.of('ts_omni_e2e_request_latency_seconds{}').length).to.equal(1);
    expect(rec.of('ts_omni_prompt_tokens_total{}')).to.deep.equal([0, 5]);
    expect(rec.of('ts_omni_generation_tokens_total{}')).to.deep.equal([0, 4]);
    const audio = '{replica=0,stage=code2wav}';
    expect(rec.of(`ts_omni_audio_ttfp_seconds${audio}`).length).to.equal(1);
    expect(rec.of(`ts_omni_audio_frames_total${audio}`)).to.deep.equal([24000]);
    expect(rec.of(`ts_omni_audio_duration_seconds${audio}`)).to.deep.equal([1]);
    expect(rec.of(`ts_omni_audio_rtf${audio}`)).to.deep.equal([0.5]);
    expect(rec.of(`ts_omni_audio_underrun_seconds${audio}`)).to.deep.equal([]); // not streamed
    const edge = '{from_replica=0,from_stage=thinker,to_replica=0,to_stage=code2wav}';
    expect(rec.of(`ts_omni_transfer_size_bytes${edge}`)).to.deep.equal([8, 4]); // int32 codes: [10, 11], [12]
    expect(rec.of(`ts_omni_transfer_tx_seconds${edge}`).length).to.equal(2);
    expect(rec.of(`ts_omni_transfer_rx_seconds${edge}`)).to.deep.equal([0.0005, 0.0005]);
    expect(rec.of(`ts_omni_transfer_in_flight_seconds${edge}`)).to.deep.equal([0.002, 0]);
    expect(rec.of('ts_omni_stage_inflight_requests{replica=0,stage=thinker}')).to.deep.equal([1, 0]);
    expect(rec.of('ts_omni_stage_inflight_requests{replica=0,stage=code2wav}')).to.deep.equal([1, 0]);
    expect(rec.of('ts_inference_requests_total{}')).to.deep.equal([1]);
    expect(rec.of('ts_inference_latency_microseconds{}').length).to.equal(1);
    expect(rec.of('ts_queue_latency_microseconds{}')).to.deep.equal([1500]);
    const trace = agg.traces[0]!;
    expect([trace.reason, trace.frames, trace.hops.map((h) => [h.seq, h.bytes, h.rxMs, h.inFlightMs])]).to.deep.equal([
      'stop',
      24000,
      [
        [0, 8, 0.5, 2],
        [1, 4, 0.5, 0],
      ],
    ]);
  });

  it("should run a streamed request's chunks through the player simulation: no gap, continuity ok under every threshold", () => {
    const { orch, thinker, vocoder, rec } = setup(1);
    started(orch.start(chat({ requestId: 'r1', streamed: true }), sink().sink));
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([10]));
    vocoder.audio('r1', 0, 24000); // 1 s of audio: the next chunk arrives well within it
    t.sink.onOutput(out([11, 2], { finishReason: 'stop' }));
    vocoder.audio('r1', 1, 24000);
    const audio = '{replica=0,stage=code2wav}';
    expect(rec.of(`ts_omni_audio_underrun_seconds${audio}`)).to.deep.equal([0]);
    for (const ms of [20, 50, 100, 250])
      expect(rec.of(`ts_omni_audio_continuity_ok_total{replica=0,stage=code2wav,threshold_ms=${ms}}`)).to.deep.equal([
        1,
      ]);
  });

  it('should bind a request to the least loaded replica of each stage, ties going round-robin, and run the thinker on that engine', () => {
    const { orch, thinker, vocoder, agg } = setup();
    thinker.capacity = 10;
    const replicas = (): [number, number][] => agg.traces.map((t) => [t.thinkerReplica, t.vocoderReplica]);
    started(orch.start(chat({ requestId: 'a' }), sink().sink)); // turn 0, all idle: replica 0 of both
    thinker.loads = [1, 0];
    started(orch.start(chat({ requestId: 'b' }), sink().sink)); // turn 1: thinker 1 is free; code2wav 1 is free
    thinker.loads = [1, 1];
    started(orch.start(chat({ requestId: 'c' }), sink().sink)); // turn 2, ties: from 0; code2wav both hold 1: from 0
    thinker.loads = [2, 2];
    started(orch.start(chat({ requestId: 'd' }), sink().sink)); // turn 3, ties: from 1; code2wav 1 holds 1, 0 holds 2
    expect(replicas()).to.deep.equal([
      [0, 0],
      [1, 1],
      [0, 0],
      [1, 1],
    ]);
    expect(thinker.runs.map((r) => r.req.engine)).to.deep.equal([0, 1, 0, 1]);
    expect([...vocoder.bound.entries()].map(([id, b]) => [id, b.replica])).to.deep.equal([
      ['a', 0],
      ['b', 1],
      ['c', 0],
      ['d', 1],
    ]);
    expect(orch.counts()).to.deep.equal({ running: 0, waiting: 4 });
  });

  it('should answer 503 naming the stage that has no replica up, and start nothing', () => {
    const { orch, thinker, vocoder, rec } = setup();
    thinker.loads = [];
    expect(orch.start(chat(), sink().sink)).to.deep.equal({
      status: 503,
      message: 'model tiny-omni: stage thinker has no replica ready',
    });
    thinker.loads = [0];
    vocoder.up = [];
    expect(orch.start(chat(), sink().sink)).to.deep.equal({
      status: 503,
      message: 'model tiny-omni: stage code2wav has no replica ready',
    });
    expect([thinker.runs.length, vocoder.bound.size, orch.inFlight]).to.deep.equal([0, 0, 0]);
    expect(rec.of('tsserve_requests_refused_total{reason=queue_full}')).to.deep.equal([]);
    expect(rec.of('ts_inference_requests_total{}')).to.deep.equal([]);
  });

  it('should refuse with 503 and count queue_full when the least loaded code2wav replica holds --job-queue-size requests', () => {
    const { orch, thinker, vocoder, rec } = setup();
    thinker.capacity = 1;
    vocoder.extra = [1, 2];
    expect(orch.start(chat(), sink().sink)).to.deep.equal({
      status: 503,
      message:
        'model tiny-omni: stage code2wav has 1 request in flight on its least loaded replica, the most one holds (--job-queue-size 1); retry later',
    });
    thinker.capacity = 2;
    vocoder.extra = [2, 3];
    expect(orch.start(chat(), sink().sink)).to.deep.equal({
      status: 503,
      message:
        'model tiny-omni: stage code2wav has 2 requests in flight on its least loaded replica, the most one holds (--job-queue-size 2); retry later',
    });
    expect(rec.of('tsserve_requests_refused_total{reason=queue_full}')).to.deep.equal([1, 1]);
    expect([thinker.runs.length, vocoder.bound.size, orch.inFlight]).to.deep.equal([0, 0, 0]);
    vocoder.extra = [1, 3]; // one below the bound: admitted
    started(orch.start(chat(), sink().sink));
    expect(orch.inFlight).to.equal(1);
  });

  it("should pass on the thinker's refusal and unbind the code2wav replica without counting the request", () => {
    const { orch, thinker, vocoder, rec } = setup();
    thinker.refusal = { status: 503, message: 'model tiny-omni has 2 requests in flight' };
    expect(orch.start(chat({ requestId: 'r1' }), sink().sink)).to.deep.equal(thinker.refusal);
    expect([vocoder.released, vocoder.bound.size, orch.inFlight]).to.deep.equal([[['r1', false]], 0, 0]);
    expect(rec.of('ts_inference_requests_total{}')).to.deep.equal([]);
    expect(rec.of('ts_omni_num_requests_waiting{}')).to.deep.equal([0]);
    expect(rec.of('ts_omni_stage_inflight_requests{replica=0,stage=thinker}')).to.deep.equal([]);
  });

  it('should answer 503 when the chosen code2wav replica cannot be bound, before the thinker starts', () => {
    const { orch, thinker, vocoder } = setup();
    vocoder.bindable = false;
    expect(orch.start(chat(), sink().sink)).to.deep.equal({
      status: 503,
      message: 'model tiny-omni: code2wav replica 0 is not reachable',
    });
    expect([thinker.runs.length, orch.inFlight]).to.deep.equal([0, 0]);
  });

  it("should fail the request with the thinker's error, cancel the code2wav stage and count it as error", () => {
    const { orch, thinker, vocoder, rec } = setup();
    const s = sink();
    started(orch.start(chat({ requestId: 'r1' }), s.sink));
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([10]));
    t.sink.onError(500, 'worker 1 of model tiny-omni exited');
    t.sink.onOutput(out([11], { finishReason: 'stop' })); // after the end: ignored
    expect(s.heard.errors).to.deep.equal([[500, 'thinker: worker 1 of model tiny-omni exited']]);
    expect([s.heard.done, vocoder.released, t.aborts, vocoder.sent.length]).to.deep.equal([null, [['r1', true]], 1, 0]);
    expect(rec.of('ts_omni_requests_success_total{finished_reason=error}')).to.deep.equal([0, 1]);
    expect(rec.of('ts_omni_num_requests_running{}')).to.deep.equal([0, 0, 1, 0]);
    expect(rec.of('ts_inference_requests_total{}')).to.deep.equal([1]);
    expect(rec.of('ts_inference_latency_microseconds{}').length).to.equal(1);
  });

  it('should end with 500 and the finish reason itself when the thinker finishes with abort', () => {
    const { orch, thinker, vocoder, rec } = setup();
    const s = sink();
    started(orch.start(chat({ requestId: 'r1' }), s.sink));
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([], { finishReason: 'abort' }));
    expect(s.heard.errors).to.deep.equal([[500, 'thinker finished with abort']]);
    expect([vocoder.released, t.aborts]).to.deep.equal([[['r1', true]], 0]); // the thinker is done already
    expect(rec.of('ts_omni_requests_success_total{finished_reason=abort}')).to.deep.equal([0, 1]);
  });

  it('should fail with 500 and count no_codec_tokens when the thinker stops on EOS with nothing to speak', () => {
    const { orch, thinker, vocoder, rec } = setup();
    const s = sink();
    started(orch.start(chat({ requestId: 'r1' }), s.sink));
    thinker.runs[0]!.sink.onOutput(out([2], { finishReason: 'stop' }));
    expect(s.heard.errors).to.deep.equal([
      [500, 'code2wav rejected the request: the thinker produced no codec tokens'],
    ]);
    expect(vocoder.sent.length).to.equal(0);
    expect(
      rec.of('ts_omni_audio_skipped_requests_total{reason=no_codec_tokens,replica=0,stage=code2wav}'),
    ).to.deep.equal([1]);
    expect(rec.of('ts_omni_requests_success_total{finished_reason=error}')).to.deep.equal([0, 1]);
  });

  it("should fail a chat with 500 when code2wav rejects the thinker's tokens, abort the thinker and count the skip by reason", () => {
    const { orch, thinker, vocoder, rec } = setup(1);
    const s = sink();
    started(orch.start(chat({ requestId: 'r1' }), s.sink));
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([10]));
    vocoder.reject('r1', 'invalid_codec_token');
    expect(s.heard.errors).to.deep.equal([[500, 'code2wav rejected the request: bad invalid_codec_token']]);
    expect([t.aborts, vocoder.released]).to.deep.equal([1, [['r1', true]]]);
    expect(
      rec.of('ts_omni_audio_skipped_requests_total{reason=invalid_codec_token,replica=0,stage=code2wav}'),
    ).to.deep.equal([1]);
  });

  it('should speak /v1/audio/speech codes as they are without the thinker, answer 400 for an invalid one, and record no transfer', () => {
    const { orch, thinker, vocoder, rec } = setup(2);
    const ok = sink();
    started(orch.start(chat({ requestId: 's1', codes: [5, 6, 2] }), ok.sink));
    // Every code is spoken (2 is no EOS here), in chunks of 2.
    expect(vocoder.sent.map((c) => [c.seq, [...c.codes]])).to.deep.equal([
      [0, [5, 6]],
      [1, [2]],
    ]);
    vocoder.audio('s1', 0, 100);
    vocoder.audio('s1', 1, 50);
    expect(ok.heard.done).to.deep.include({ finishReason: 'stop', frames: 150, completionTokens: 3, promptTokens: 0 });
    expect(thinker.runs.length).to.equal(0);
    expect([...rec.values.keys()].filter((k) => k.startsWith('ts_omni_transfer_'))).to.deep.equal([]);
    const bad = sink();
    started(orch.start(chat({ requestId: 's2', codes: [99999] }), bad.sink));
    vocoder.reject('s2', 'invalid_codec_token');
    expect(bad.heard.errors).to.deep.equal([[400, 'code2wav rejected the request: bad invalid_codec_token']]);
    expect(rec.of('ts_omni_requests_success_total{finished_reason=stop}')).to.deep.equal([0, 1]);
    expect(rec.of('ts_omni_requests_success_total{finished_reason=error}')).to.deep.equal([0, 1]);
  });

  it("should cancel every stage on the client's abort, count it as abort, tell the sink nothing and ignore what comes after", () => {
    const { orch, thinker, vocoder, rec } = setup(1);
    const s = sink();
    const h = started(orch.start(chat({ requestId: 'r1' }), s.sink));
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([10]));
    const listener = vocoder.bound.get('r1')!.listener;
    h.abort();
    h.abort(); // once only
    listener.onMessage({
      type: 'tsserve.voc.audio',
      requestId: 'r1',
      seq: 0,
      pcm: new Uint8Array(2),
      frames: 1,
      rxStartEpochMs: 0,
      rxMs: 0,
      computeMs: 0,
    });
    t.sink.onOutput(out([11, 2], { finishReason: 'stop' }));
    expect(s.heard).to.deep.equal({ text: [], audio: [], done: null, errors: [] });
    expect([t.aborts, vocoder.released, orch.inFlight]).to.deep.equal([1, [['r1', true]], 0]);
    expect(rec.of('ts_omni_requests_success_total{finished_reason=abort}')).to.deep.equal([0, 1]);
    expect(rec.of('ts_omni_generation_tokens_total{}')).to.deep.equal([0, 1]);
  });

  it('should fail the request with the status the code2wav stage gives when its replica goes away', () => {
    const { orch, thinker, vocoder } = setup();
    const s = sink();
    started(orch.start(chat({ requestId: 'r1' }), s.sink));
    vocoder.bound.get('r1')!.listener.onReplicaGone(500, 'worker w1 of model tiny-omni (replica 0) exited');
    expect(s.heard.errors).to.deep.equal([[500, 'code2wav: worker w1 of model tiny-omni (replica 0) exited']]);
    expect(thinker.runs[0]!.aborts).to.equal(1);
  });

  it('should fail with 500 when a chunk cannot reach its replica, and with 503 when the stage is stopping', () => {
    const { orch, thinker, vocoder } = setup(1);
    vocoder.reachable = false;
    const dead = sink();
    started(orch.start(chat({ requestId: 'r1' }), dead.sink));
    thinker.runs[0]!.sink.onOutput(out([10]));
    expect(dead.heard.errors).to.deep.equal([[500, 'code2wav replica 0 is not reachable: its worker is gone']]);
    vocoder.isStopping = true;
    const stopping = sink();
    started(orch.start(chat({ requestId: 'r2' }), stopping.sink));
    thinker.runs[1]!.sink.onOutput(out([10]));
    expect(stopping.heard.errors).to.deep.equal([[503, 'code2wav: model tiny-omni was stopped']]);
    expect(thinker.runs.map((r) => r.aborts)).to.deep.equal([1, 1]);
  });

  it('should record the time to first audio once per request, at the first chunk that carries frames', () => {
    const { orch, thinker, vocoder, rec } = setup(1);
    started(orch.start(chat({ requestId: 'r1' }), sink().sink));
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([10]));
    t.sink.onOutput(out([11]));
    t.sink.onOutput(out([12, 2], { finishReason: 'stop' }));
    vocoder.audio('r1', 0, 0); // an empty chunk: nothing to hear yet
    const ttfp = 'ts_omni_audio_ttfp_seconds{replica=0,stage=code2wav}';
    expect(rec.of(ttfp).length).to.equal(0);
    vocoder.audio('r1', 1, 10);
    vocoder.audio('r1', 2, 10);
    expect(rec.of(ttfp).length).to.equal(1);
    expect(rec.of('ts_omni_audio_frames_total{replica=0,stage=code2wav}')).to.deep.equal([20]);
  });

  it('should ignore audio of a chunk other than the next one expected', () => {
    const { orch, thinker, vocoder } = setup(1);
    const s = sink();
    started(orch.start(chat({ requestId: 'r1' }), s.sink));
    const t = thinker.runs[0]!;
    t.sink.onOutput(out([10]));
    t.sink.onOutput(out([11, 2], { finishReason: 'stop' }));
    vocoder.audio('r1', 1, 10); // ahead of seq 0: stale
    expect([s.heard.audio, s.heard.done]).to.deep.equal([[], null]);
    vocoder.audio('r1', 0, 20);
    vocoder.audio('r1', 1, 30);
    expect([s.heard.audio, s.heard.done?.frames]).to.deep.equal([[40, 60], 50]);
  });

  it('should resolve whenIdle only once the last request in flight has ended', async () => {
    const { orch } = setup();
    await orch.whenIdle(); // idle already
    const a = started(orch.start(chat(), sink().sink));
    const b = started(orch.start(chat(), sink().sink));
    let idle = false;
    const waiting = orch.whenIdle().then(() => (idle = true));
    a.abort();
    await Promise.resolve();
    expect([idle, orch.inFlight]).to.deep.equal([false, 1]);
    b.abort();
    await waiting;
    expect([idle, orch.inFlight]).to.deep.equal([true, 0]);
  });
});
