/**
 * The pipeline families of one pipeline model (vLLM-Omni's OmniPrometheusMetrics):
 * `ts_omni_num_requests_running` / `_waiting`, `ts_omni_requests_success_total{finished_reason}`,
 * `ts_omni_e2e_request_latency_seconds`, `ts_omni_prompt_tokens_total` / `ts_omni_generation_tokens_total`
 * (vLLM-Omni's names in the vLLM profile), bound once per model; no-ops when stats are off.
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
  private readonly promptTokens: BoundSeries;
  private readonly generationTokens: BoundSeries;

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
    this.promptTokens = bindOrNoop(metrics, 'ts_omni_prompt_tokens_total', m, enabled);
    this.generationTokens = bindOrNoop(metrics, 'ts_omni_generation_tokens_total', m, enabled);
    this.promptTokens.record(0);
    this.generationTokens.record(0);
  }

  /** Requests admitted whose thinker has produced output (running) or not yet (waiting). */
  setCounts(running: number, waiting: number): void {
    this.running.record(running);
    this.waiting.record(waiting);
  }

  /**
   * A request left the pipeline, for `reason`, `e2eSec` after it arrived, with the prompt and
   * generated tokens of its token stage (the usage its client was told; the audio stage makes no tokens).
   */
  finished(reason: FinishReason, e2eSec: number, promptTokens = 0, generationTokens = 0): void {
    this.success[reason].record(1);
    this.e2e.record(e2eSec);
    if (promptTokens > 0) this.promptTokens.record(promptTokens);
    if (generationTokens > 0) this.generationTokens.record(generationTokens);
  }
}
