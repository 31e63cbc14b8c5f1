/**
 * The pipeline families of one pipeline model (vLLM-Omni's OmniPrometheusMetrics):
 * `ts_omni_num_requests_running` / `_waiting`, `ts_omni_requests_success_total{finished_reason}`,
 * `ts_omni_e2e_request_latency_seconds`, bound once per model; no-ops when stats are off.
 */
import type { FinishReason } from '../../schema/engine-ipc.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import type { MetricsPort } from '../models/metrics-port.js';
import { bindOrNoop } from '../metrics/bind-or-noop.js';

/** Every pipeline finish reason, each pre-created at 0. */
export const PIPELINE_FINISH_REASONS: readonly FinishReason[] = ['stop', 'length', 'abort', 'error'];

/** Bound pipeline series of one model. */
export class PipelineMetrics {
  private readonly running: BoundSeries;
  private readonly waiting: BoundSeries;
  private readonly success: Readonly<Record<FinishReason, BoundSeries>>;
  private readonly e2e: BoundSeries;

  constructor(metrics: Pick<MetricsPort, 'get'>, modelName: string, enabled: boolean) {
    const m = { model_name: modelName };
    this.running = bindOrNoop(metrics, 'ts_omni_num_requests_running', m, enabled);
    this.waiting = bindOrNoop(metrics, 'ts_omni_num_requests_waiting', m, enabled);
    this.e2e = bindOrNoop(metrics, 'ts_omni_e2e_request_latency_seconds', m, enabled);
    const success = {} as Record<FinishReason, BoundSeries>;
    for (const r of PIPELINE_FINISH_REASONS) {
      success[r] = bindOrNoop(metrics, 'ts_omni_requests_success_total', { ...m, finished_reason: r }, enabled);
      success[r].record(0);
    }
    this.success = success;
    this.running.record(0);
    this.waiting.record(0);
  }

  /** Requests admitted whose thinker has produced output (running) or not yet (waiting). */
  setCounts(running: number, waiting: number): void {
    this.running.record(running);
    this.waiting.record(waiting);
  }

  /** A request left the pipeline, for `reason`, `e2eSec` after it arrived. */
  finished(reason: FinishReason, e2eSec: number): void {
    this.success[reason].record(1);
    this.e2e.record(e2eSec);
  }
}
