/**
 * The worker's metrics cache: TorchServe's handler API (`addMetric`, `getMetric`,
 * `addCounter`/`addTime`/`addSize`/`addPercent`) built from the frontend's validated config,
 * buffering raw datapoints that `flush()` sends to the frontend as one `MetricsMessage`.
 * Its jobs live in their own files: the registry (`metric-registry.ts`), the drop ledger
 * (`drop-ledger.ts`), the flusher (`flusher.ts`) and TorchServe's helpers
 * (`torchserve-helpers.ts`); this class is the API that joins them.
 */
import type { MetricsConfig } from '../../schema/types.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import { DisabledWorkerMetrics } from './disabled-metrics.js';
import { DropLedger } from '../../schema/flush/drop-ledger.js';
import { MetricsFlusher } from '../../schema/flush/flusher.js';
import { MetricRegistry } from './metric-registry.js';
import { TorchServeHelpers } from './torchserve-helpers.js';
import type { MetricOwner } from './worker-metric.js';
import type { WorkerMetricsApi, WorkerMetricsOptions } from './worker-metrics-api.js';

export type { MetricsSend, WorkerMetricsApi, WorkerMetricsOptions } from './worker-metrics-api.js';
export { MAX_WARNED } from '../../schema/flush/drop-ledger.js';

/** The cache `opts` asks for: live, or (metrics off) one that does nothing. Decided here, once. */
export function createWorkerMetrics(config: MetricsConfig, opts: WorkerMetricsOptions): WorkerMetricsApi {
  return opts.enabled === false ? new DisabledWorkerMetrics(opts.autoLabels ?? {}) : new WorkerMetrics(config, opts);
}

/**
 * The worker-side model metrics cache. Nothing here throws into handler code. Each API method
 * is its job's own method, bound (the registry's, the helpers', the flusher's): this class
 * wires them and adds no call of its own to a datapoint's path.
 */
export class WorkerMetrics implements WorkerMetricsApi {
  readonly autoLabels: AutoLabels;
  /** Datapoints dropped since start, by reason (cumulative; flushes carry deltas): the ledger's totals. */
  readonly dropped: Readonly<Record<string, number>>;
  /** See WorkerMetricsApi.records. */
  readonly records: WorkerMetricsApi['records'];
  /** The batch being handled; bound records carry these ids joined by `,` (TorchServe). */
  readonly setRequestIds: WorkerMetricsApi['setRequestIds'];
  /**
   * Returns the metric `name`. A declared one is returned if `type` and `dimensionNames` (when
   * given) agree with the yaml, whose unit wins; an undeclared one is registered from this call
   * when auto-detect is on. Anything else gets a no-op metric that counts its drops.
   */
  readonly addMetric: WorkerMetricsApi['addMetric'];
  /** Returns the metric `name` (of `type`, when given); unknown → a counted no-op, never throws. */
  readonly getMetric: WorkerMetricsApi['getMetric'];
  /** Increments counter `name` (auto-detected as a `Count` counter with ModelName, Level). */
  readonly addCounter: WorkerMetricsApi['addCounter'];
  /** Records a time in `ms` or `s` (gauge by default); other units are dropped as `bad_unit`. */
  readonly addTime: WorkerMetricsApi['addTime'];
  /** Records a size in B, kB, MB or GB (gauge by default); other units are dropped as `bad_unit`. */
  readonly addSize: WorkerMetricsApi['addSize'];
  /** Records a percentage (gauge by default). */
  readonly addPercent: WorkerMetricsApi['addPercent'];
  /** See WorkerMetricsApi.flush and MetricsFlusher.flush. */
  readonly flush: WorkerMetricsApi['flush'];

  constructor(config: MetricsConfig, opts: WorkerMetricsOptions) {
    const log = opts.log ?? ((): void => undefined);
    this.autoLabels = Object.freeze({ ...(opts.autoLabels ?? {}) });
    const ledger = new DropLedger(log);
    const flusher = new MetricsFlusher(config.limits.maxPointsPerFlush, opts.nowMs ?? Date.now, opts.send, ledger, log);
    // What a metric reaches: the buffer directly, the ledger and the flusher without a hop through this class.
    const owner: MetricOwner = {
      buffer: flusher.buffer,
      maxSeriesPerMetric: config.limits.maxSeriesPerMetric,
      newSeries: (metric, values) => flusher.newSeries(metric, values),
      drop: (reason, metric, detail) => ledger.drop(reason, metric, detail),
      overflowed: (metric) => ledger.overflowed(metric),
    };
    const autoDetect = opts.autoDetect ?? config.autoDetect;
    const registry = new MetricRegistry(config, owner, ledger, flusher, autoDetect, this.autoLabels);
    const helpers = new TorchServeHelpers(registry, ledger, flusher.buffer, opts.modelName);
    this.dropped = ledger.totals;
    this.records = registry.records.bind(registry);
    this.setRequestIds = helpers.setRequestIds.bind(helpers);
    this.addMetric = registry.addMetric.bind(registry);
    this.getMetric = registry.getMetric.bind(registry);
    this.addCounter = helpers.addCounter.bind(helpers);
    this.addTime = helpers.addTime.bind(helpers);
    this.addSize = helpers.addSize.bind(helpers);
    this.addPercent = helpers.addPercent.bind(helpers);
    this.flush = flusher.flush.bind(flusher);
  }
}
