/**
 * The audio modality families of a pipeline's audio stage (vLLM-Omni's OmniModalityMetrics),
 * labelled `model_name, stage, replica`: time to first audio packet, audio duration, real-time
 * factor, frames, worst player underrun, continuity-ok per threshold, skipped requests by
 * reason. A replica's series are bound on its first observation; all no-ops when stats are off.
 */
import type { VocoderRejectReason } from '../../schema/vocoder-ipc.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import type { MetricsPort } from '../models/metrics-port.js';
import { bindOrNoop } from '../metrics/bind-or-noop.js';
import type { PipelineMetricName } from '../../schema/metric-catalog.js';

/** Thresholds (ms) of `ts_omni_audio_continuity_ok_total{threshold_ms}`: a request counts under each its worst underrun stayed below. */
export const CONTINUITY_THRESHOLDS_MS: readonly number[] = [20, 50, 100, 250];

interface ReplicaSeries {
  readonly ttfp: BoundSeries;
  readonly duration: BoundSeries;
  readonly rtf: BoundSeries;
  readonly frames: BoundSeries;
  readonly underrun: BoundSeries;
  readonly continuity: readonly BoundSeries[];
  readonly skipped: Map<VocoderRejectReason, BoundSeries>;
}

/** Audio series of one pipeline's audio stage. */
export class AudioMetrics {
  private readonly byReplica = new Map<number, ReplicaSeries>();

  constructor(
    private readonly metrics: Pick<MetricsPort, 'get'>,
    private readonly modelName: string,
    private readonly stage: string,
    private readonly enabled: boolean,
  ) {}

  /** Arrival → first audio packet, in seconds (frontend monotonic clock). */
  firstPacket(replica: number, sec: number): void {
    this.of(replica).ttfp.record(sec);
  }

  /** A request's audio is complete: `frames` at `sampleRate`, `genSec` of stage generation time. */
  finalize(replica: number, frames: number, sampleRate: number, genSec: number): void {
    const s = this.of(replica);
    const duration = frames / sampleRate;
    s.frames.record(frames);
    s.duration.record(duration);
    if (duration > 0) s.rtf.record(genSec / duration);
  }

  /** A streamed request's worst underrun (s) from the player simulation. */
  streamed(replica: number, worstSec: number): void {
    const s = this.of(replica);
    s.underrun.record(worstSec);
    CONTINUITY_THRESHOLDS_MS.forEach((ms, i) => {
      if (worstSec * 1000 < ms) s.continuity[i]!.record(1);
    });
  }

  /** The stage rejected the request's input: no audio, counted by reason. */
  skipped(replica: number, reason: VocoderRejectReason): void {
    const s = this.of(replica);
    let h = s.skipped.get(reason);
    if (h === undefined)
      s.skipped.set(reason, (h = this.bind('ts_omni_audio_skipped_requests_total', replica, { reason })));
    h.record(1);
  }

  private bind(name: PipelineMetricName, replica: number, extra: Readonly<Record<string, string>> = {}): BoundSeries {
    const dims = { model_name: this.modelName, stage: this.stage, replica: String(replica), ...extra };
    return bindOrNoop(this.metrics, name, dims, this.enabled);
  }

  private of(replica: number): ReplicaSeries {
    let s = this.byReplica.get(replica);
    if (s === undefined) {
      s = {
        ttfp: this.bind('ts_omni_audio_ttfp_seconds', replica),
        duration: this.bind('ts_omni_audio_duration_seconds', replica),
        rtf: this.bind('ts_omni_audio_rtf', replica),
        frames: this.bind('ts_omni_audio_frames_total', replica),
        underrun: this.bind('ts_omni_audio_underrun_seconds', replica),
        continuity: CONTINUITY_THRESHOLDS_MS.map((ms) =>
          this.bind('ts_omni_audio_continuity_ok_total', replica, { threshold_ms: String(ms) }),
        ),
        skipped: new Map(),
      };
      this.byReplica.set(replica, s);
    }
    return s;
  }
}
