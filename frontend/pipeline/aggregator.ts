/**
 * The logging view of a pipeline (vLLM-Omni's OrchestratorAggregator), fed from the same
 * records as the metric families: at DEBUG, one table per finished request with its stage
 * timings and every transfer's size and times; at INFO, one line per pipeline per stat
 * interval (finished by reason, e2e, audio generated, transfers). Idle intervals log at DEBUG.
 */
import type { FinishReason } from '../../schema/engine-ipc.js';
import type { StatLine } from '../generation/logging-stat-logger.js';

/** One chunk hop of a request. Times in ms; `NaN` until the receiver answered. */
export interface HopTrace {
  readonly seq: number;
  readonly bytes: number;
  readonly txMs: number;
  rxMs: number;
  inFlightMs: number;
  readonly sentEpochMs: number;
}

/** One request's stage timings (frontend `performance.now()` ms) and hops. */
export interface RequestTrace {
  readonly requestId: string;
  readonly arrivalMs: number;
  readonly thinkerReplica: number;
  readonly vocoderReplica: number;
  thinkerFirstMs: number;
  thinkerDoneMs: number;
  firstAudioMs: number;
  endMs: number;
  reason: FinishReason;
  frames: number;
  readonly hops: HopTrace[];
}

const ms = (from: number, to: number): string =>
  Number.isFinite(to) && Number.isFinite(from) ? (to - from).toFixed(1) : '-';
const num = (v: number): string => (Number.isFinite(v) ? v.toFixed(3) : '-');

/** Renders a finished request's trace as the DEBUG table (exact text pinned in a test). */
export function renderTrace(modelName: string, stages: readonly [string, string], t: RequestTrace): string {
  const lines = [
    `[${modelName}] request ${t.requestId} finished ${t.reason} in ${ms(t.arrivalMs, t.endMs)} ms, ${t.frames} frames`,
    '  stage     replica  first_ms  done_ms',
    `  ${stages[0].padEnd(9)} ${String(t.thinkerReplica).padEnd(8)} ${ms(t.arrivalMs, t.thinkerFirstMs).padStart(8)} ${ms(t.arrivalMs, t.thinkerDoneMs).padStart(8)}`,
    `  ${stages[1].padEnd(9)} ${String(t.vocoderReplica).padEnd(8)} ${ms(t.arrivalMs, t.firstAudioMs).padStart(8)} ${ms(t.arrivalMs, t.endMs).padStart(8)}`,
    `  hop ${stages[0]}/${t.thinkerReplica} -> ${stages[1]}/${t.vocoderReplica}: seq  bytes  tx_ms  rx_ms  in_flight_ms`,
  ];
  for (const h of t.hops)
    lines.push(
      `    ${String(h.seq).padStart(4)} ${String(h.bytes).padStart(6)} ${num(h.txMs).padStart(6)} ${num(h.rxMs).padStart(6)} ${num(h.inFlightMs).padStart(13)}`,
    );
  return lines.join('\n');
}

/** Accumulates one pipeline's interval and renders its lines. */
export class PipelineAggregator {
  private readonly byReason: Record<FinishReason, number> = { stop: 0, length: 0, abort: 0, error: 0 };
  private finishedCount = 0;
  private e2eMsSum = 0;
  private frames = 0;
  private hops = 0;
  private hopBytes = 0;
  private inFlightMsSum = 0;

  constructor(
    private readonly modelName: string,
    private readonly stages: readonly [string, string],
    private readonly sampleRate: number,
    /** Where DEBUG tables go; null when DEBUG is off (no table is rendered at all). */
    private readonly debug: ((line: string) => void) | null,
    /** The pipeline's current running/waiting counts. */
    private readonly counts: () => { readonly running: number; readonly waiting: number },
  ) {}

  /** A fresh trace for a request bound to these replicas. */
  newTrace(requestId: string, arrivalMs: number, thinkerReplica: number, vocoderReplica: number): RequestTrace {
    return {
      requestId,
      arrivalMs,
      thinkerReplica,
      vocoderReplica,
      thinkerFirstMs: NaN,
      thinkerDoneMs: NaN,
      firstAudioMs: NaN,
      endMs: NaN,
      reason: 'stop',
      frames: 0,
      hops: [],
    };
  }

  /** A request ended: fold it into the interval, print its table at DEBUG. */
  finished(t: RequestTrace): void {
    this.byReason[t.reason]++;
    this.finishedCount++;
    this.e2eMsSum += t.endMs - t.arrivalMs;
    this.frames += t.frames;
    for (const h of t.hops) {
      this.hops++;
      this.hopBytes += h.bytes;
      if (Number.isFinite(h.inFlightMs)) this.inFlightMsSum += h.inFlightMs;
    }
    this.debug?.(renderTrace(this.modelName, this.stages, t));
  }

  /** The interval's line (INFO, or DEBUG when idle), then a fresh interval. */
  statLines(): StatLine[] {
    const { running, waiting } = this.counts();
    const r = this.byReason;
    const n = this.finishedCount;
    const line =
      `[${this.modelName}] pipeline: finished ${n} (stop ${r.stop}, length ${r.length}, abort ${r.abort}, error ${r.error}), ` +
      `running ${running}, waiting ${waiting}, mean e2e ${n === 0 ? '-' : (this.e2eMsSum / n / 1000).toFixed(3)} s, ` +
      `audio ${(this.frames / this.sampleRate).toFixed(2)} s, transfers ${this.hops} chunks ${this.hopBytes} B, ` +
      `mean in flight ${this.hops === 0 ? '-' : (this.inFlightMsSum / this.hops).toFixed(3)} ms`;
    const level = n === 0 && running === 0 && waiting === 0 ? 'debug' : 'info';
    r.stop = r.length = r.abort = r.error = 0;
    this.finishedCount = this.e2eMsSum = this.frames = this.hops = this.hopBytes = this.inFlightMsSum = 0;
    return [{ level, line }];
  }
}
