/**
 * The metrics the frontend itself emits (TorchServe's frontend metrics), checked against
 * metrics.yaml and bound once at start-up. A metric missing from the yaml is switched off
 * (TorchServe); one declared with other dimensions or another type stops start-up with a
 * message naming what the server supplies (never a per-request failure).
 */
import type { MetricSpec, MetricsConfig } from '../../schema/types.js';
import { FRONTEND_BINDINGS } from '../../schema/metric-catalog.js';
import type { BoundMetricName, NameBinding } from '../../schema/metric-catalog.js';
import { bindOrNoop } from '../metrics/bind-or-noop.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import type { MetricsPort } from './metrics-port.js';

/** Every frontend metric the server records, with the dimensions it supplies (the catalog's table). */
export const EMITTED_METRICS: Readonly<Record<string, NameBinding>> = FRONTEND_BINDINGS;

/** Where the check finds a declared metric: a `MetricsPort` at start, a loaded config in `tsserve metrics validate`. */
export interface SpecLookup {
  get(name: string): { readonly spec: MetricSpec } | null;
}

/** The lookup over a loaded config's metrics (no sink is opened: validate needs no server). */
export function specLookup(config: MetricsConfig): SpecLookup {
  const byName = new Map(config.metrics.map((spec) => [spec.name, { spec }]));
  return { get: (name) => byName.get(name) ?? null };
}

/** Problems with how metrics.yaml declares the frontend metrics (empty when fine), each `LINE:COL: message`. */
export function checkFrontendMetrics(metrics: SpecLookup): string[] {
  const problems: string[] = [];
  for (const [name, e] of Object.entries(EMITTED_METRICS)) {
    const m = metrics.get(name);
    if (m === null) continue;
    const where = m.spec.pos ? `${m.spec.pos.line}:${m.spec.pos.col}: ` : '';
    if (m.spec.section !== 'ts_metrics')
      problems.push(`${where}metric ${name} is emitted by the frontend: declare it under ts_metrics`);
    if (!e.types.includes(m.spec.type))
      problems.push(`${where}metric ${name} must be a ${e.types.join(' or ')} (declared ${m.spec.type})`);
    const declared = [...m.spec.dimensions].sort().join(',');
    if (declared !== [...e.dims].sort().join(',')) {
      problems.push(
        `${where}metric ${name} must have dimensions [${e.dims.join(', ')}] (+ the hostname), declared [${m.spec.dimensions.join(', ')}]`,
      );
    }
  }
  return problems;
}

/** Per-model inference series (`model_name`, `model_version`). */
export interface ModelSeries {
  readonly requests: BoundSeries;
  readonly latencyUs: BoundSeries;
  readonly queueUs: BoundSeries;
}

/** Host-level series bound at start-up; per-model and per-worker ones bound when they appear. */
export class FrontendSeries {
  readonly requests2xx: BoundSeries;
  readonly requests4xx: BoundSeries;
  readonly requests5xx: BoundSeries;
  readonly queueTime: BoundSeries;
  readonly workerThreadTime: BoundSeries;

  constructor(private readonly metrics: MetricsPort) {
    const host = { Level: 'Host' };
    this.requests2xx = bindOrNoop(metrics, 'Requests2XX', host);
    this.requests4xx = bindOrNoop(metrics, 'Requests4XX', host);
    this.requests5xx = bindOrNoop(metrics, 'Requests5XX', host);
    this.queueTime = bindOrNoop(metrics, 'QueueTime', host);
    this.workerThreadTime = bindOrNoop(metrics, 'WorkerThreadTime', host);
  }

  /** Binds the three `ts_*` series of one model version (once, at registration). */
  forModel(modelName: string, modelVersion: string): ModelSeries {
    const dims = { model_name: modelName, model_version: modelVersion };
    return {
      requests: bindOrNoop(this.metrics, 'ts_inference_requests_total', dims),
      latencyUs: bindOrNoop(this.metrics, 'ts_inference_latency_microseconds', dims),
      queueUs: bindOrNoop(this.metrics, 'ts_queue_latency_microseconds', dims),
    };
  }

  /** Binds one series of a frontend metric by name; a no-op when metrics.yaml lacks it. */
  bind(name: BoundMetricName, dims: Readonly<Record<string, string>>): BoundSeries {
    return bindOrNoop(this.metrics, name, dims);
  }

  /** `tsserve_worker_restarts_total` of one model (a self-metric). */
  workerRestarts(modelName: string): BoundSeries {
    return bindOrNoop(this.metrics, 'tsserve_worker_restarts_total', { model_name: modelName });
  }

  /** `tsserve_worker_output_faults_total{reason}` of one model (a self-metric). */
  workerOutputFaults(modelName: string, reason: string): BoundSeries {
    return bindOrNoop(this.metrics, 'tsserve_worker_output_faults_total', { model_name: modelName, reason });
  }

  /** `tsserve_requests_refused_total{reason="queue_full"}` of one model (a self-metric), at 0 from the start. */
  queueFullRefusals(modelName: string): BoundSeries {
    const h = bindOrNoop(this.metrics, 'tsserve_requests_refused_total', {
      model_name: modelName,
      reason: 'queue_full',
    });
    h.record(0);
    return h;
  }

  /** `tsserve_front_restarts_total` (a self-metric). */
  frontRestarts(): BoundSeries {
    return bindOrNoop(this.metrics, 'tsserve_front_restarts_total', {});
  }

  /** Records `WorkerLoadTime` for one worker load, to the microsecond (a clock difference such as 37.90763000000001 is noise past it). */
  workerLoaded(workerName: string, loadTimeMs: number): void {
    bindOrNoop(this.metrics, 'WorkerLoadTime', { WorkerName: workerName, Level: 'Host' }).record(
      Math.round(loadTimeMs * 1000) / 1000,
    );
  }

  /** Counts one HTTP response in Requests2XX/4XX/5XX; 1xx and 3xx count in none. */
  countResponse(status: number): void {
    if (status >= 200 && status < 300) this.requests2xx.record(1);
    else if (status >= 400 && status < 500) this.requests4xx.record(1);
    else if (status >= 500 && status < 600) this.requests5xx.record(1);
  }
}
