/**
 * `ts_omni_stage_inflight_requests{stage, replica}` (vLLM-Omni's orchestrator monitor samples
 * each replica's in-flight requests: those bound to it): a pipeline request is bound to one
 * replica of each stage from its admission to its end, so each binding adds 1 and its end takes
 * it away. Series are bound on a replica's first request; no-ops when stats are off.
 */
import type { MetricsPort } from '../models/metrics-port.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import { bindOrNoop } from '../metrics/bind-or-noop.js';

/** In-flight requests per stage replica of one pipeline. */
export class StageLoad {
  private readonly series = new Map<string, { readonly handle: BoundSeries; count: number }>();

  constructor(
    private readonly metrics: Pick<MetricsPort, 'get'>,
    private readonly modelName: string,
    private readonly enabled: boolean,
  ) {}

  /** A request bound to (`stage`, `replica`) (+1) or done with it (−1). */
  add(stage: string, replica: number, delta: 1 | -1): void {
    const key = `${stage}\u0000${replica}`;
    let s = this.series.get(key);
    if (s === undefined) {
      const dims = { model_name: this.modelName, stage, replica: String(replica) };
      s = { handle: bindOrNoop(this.metrics, 'ts_omni_stage_inflight_requests', dims, this.enabled), count: 0 };
      this.series.set(key, s);
    }
    s.count += delta;
    s.handle.record(s.count);
  }
}
