/**
 * What handler code and the worker runtime see of the worker metrics cache: the API a handler
 * calls, where flushes go, and the cache's options. Both caches (live and switched off) implement
 * it, so neither imports the other.
 */
import type { MetricType } from '../../schema/types.js';
import type { MetricsSend } from '../../schema/flush/flusher.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import type { WorkerMetric } from './worker-metric.js';
import type { SizeUnit, TimeUnit } from './units.js';

/** The handler-facing API of the worker metrics cache (live or switched off). */
export interface WorkerMetricsApi {
  /** Datapoints dropped since start, by reason (cumulative; flushes carry deltas). */
  readonly dropped: Readonly<Record<string, number>>;
  /**
   * The labels the server fills in for this worker (from its init message). The frontend adds
   * them to this worker's series; here they only reserve their names (a handler never passes them).
   */
  readonly autoLabels: AutoLabels;
  setRequestIds(ids: readonly string[]): void;
  /**
   * Whether a datapoint of `name` would be recorded: a shown model metric, or any name while
   * auto-detect is on. The worker asks before its own HandlerTime and PredictionTime, so a
   * metric taken out of metrics.yaml is off, as in TorchServe, not a drop on every batch.
   */
  records(name: string): boolean;
  // The helpers' requestId: a request id, or (TorchServe's idx) the request's index in the batch.
  addMetric(name: string, unit: string, dimensionNames?: readonly string[], type?: MetricType): WorkerMetric;
  getMetric(name: string, type?: MetricType): WorkerMetric;
  addCounter(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
  ): void;
  addTime(
    name: string,
    value: number,
    requestId?: string | number,
    unit?: TimeUnit,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void;
  addSize(
    name: string,
    value: number,
    requestId?: string | number,
    unit?: SizeUnit,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void;
  addPercent(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void;
  /**
   * Sends what is buffered; `force` sends even while the channel is congested (shutdown).
   * `carry`, when given, sends the message instead of the cache's own send (inside another
   * message: a batch's result), with the same contract.
   */
  flush(force?: boolean, carry?: MetricsSend): number;
}

export type { MetricsSend } from '../../schema/flush/flusher.js';

/** Options of a `WorkerMetrics`. */
export interface WorkerMetricsOptions {
  readonly modelName: string;
  readonly send: MetricsSend;
  /** False (`--metrics-mode off`): a cache that records nothing and never sends. Default true. */
  readonly enabled?: boolean;
  /** Labels the server fills in for this worker; default none. */
  readonly autoLabels?: AutoLabels;
  /** Register undeclared metrics from their first use; defaults to `config.autoDetect`. */
  readonly autoDetect?: boolean;
  /** Warnings (once per metric and reason); the worker passes its log channel; dropped when absent. */
  readonly log?: (msg: string) => void;
  /** Epoch-ms clock; defaults to `Date.now`. */
  readonly nowMs?: () => number;
}
