/**
 * The worker's metrics cache: TorchServe's handler API (`addMetric`, `getMetric`,
 * `addCounter`/`addTime`/`addSize`/`addPercent`) built from the frontend's validated config,
 * buffering raw datapoints that `flush()` sends to the frontend as one `MetricsMessage`.
 * Its jobs live in their own files: the registry (`metric-registry.ts`), the drop ledger
 * (`drop-ledger.ts`), the flusher (`flusher.ts`) and TorchServe's helpers
 * (`torchserve-helpers.ts`); this class is the API that joins them.
 */
import type { MetricsConfig, MetricType } from '../../schema/types.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import { DisabledWorkerMetrics } from './disabled-metrics.js';
import { DropLedger } from './drop-ledger.js';
import { MetricsFlusher } from './flusher.js';
import { MetricRegistry } from './metric-registry.js';
import { TorchServeHelpers } from './torchserve-helpers.js';
import type { MetricOwner, WorkerMetric } from './worker-metric.js';
import type { MetricsSend, WorkerMetricsApi, WorkerMetricsOptions } from './worker-metrics-api.js';
import type { SizeUnit, TimeUnit } from './units.js';

export type { MetricsSend, WorkerMetricsApi, WorkerMetricsOptions } from './worker-metrics-api.js';
export { MAX_WARNED } from './drop-ledger.js';

/** The cache `opts` asks for: live, or (metrics off) one that does nothing. Decided here, once. */
export function createWorkerMetrics(config: MetricsConfig, opts: WorkerMetricsOptions): WorkerMetricsApi {
  return opts.enabled === false ? new DisabledWorkerMetrics(opts.autoLabels ?? {}) : new WorkerMetrics(config, opts);
}

/** The worker-side model metrics cache. Nothing here throws into handler code. */
export class WorkerMetrics implements WorkerMetricsApi {
  readonly autoLabels: AutoLabels;
  private readonly ledger: DropLedger;
  private readonly flusher: MetricsFlusher;
  private readonly registry: MetricRegistry;
  private readonly helpers: TorchServeHelpers;

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
    this.ledger = ledger;
    this.flusher = flusher;
    this.registry = new MetricRegistry(
      config,
      owner,
      ledger,
      flusher,
      opts.autoDetect ?? config.autoDetect,
      this.autoLabels,
    );
    this.helpers = new TorchServeHelpers(this.registry, ledger, opts.modelName);
  }

  /** Datapoints dropped since start, by reason (cumulative; flushes carry deltas). */
  get dropped(): Readonly<Record<string, number>> {
    return this.ledger.totals;
  }

  /** See WorkerMetricsApi.records. */
  records(name: string): boolean {
    return this.registry.records(name);
  }

  /** The batch being handled; bound records carry these ids joined by `,` (TorchServe). */
  setRequestIds(ids: readonly string[]): void {
    const batch = Array.isArray(ids) ? ids.filter((x) => typeof x === 'string') : [];
    this.helpers.setBatch(batch);
    this.flusher.buffer.setBatch(batch);
  }

  /**
   * Returns the metric `name`. A declared one is returned if `type` and `dimensionNames` (when
   * given) agree with the yaml, whose unit wins; an undeclared one is registered from this call
   * when auto-detect is on. Anything else gets a no-op metric that counts its drops.
   */
  addMetric(name: string, unit: string, dimensionNames?: readonly string[], type?: MetricType): WorkerMetric {
    return this.registry.addMetric(name, unit, dimensionNames, type);
  }

  /** Returns the metric `name` (of `type`, when given); unknown → a counted no-op, never throws. */
  getMetric(name: string, type?: MetricType): WorkerMetric {
    return this.registry.getMetric(name, type);
  }

  /** Increments counter `name` (auto-detected as a `Count` counter with ModelName, Level). */
  addCounter(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
  ): void {
    this.helpers.addCounter(name, value, requestId, dimensions);
  }

  /** Records a time in `ms` or `s` (gauge by default); other units are dropped as `bad_unit`. */
  addTime(
    name: string,
    value: number,
    requestId?: string | number,
    unit?: TimeUnit,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    this.helpers.addTime(name, value, requestId, unit, dimensions, type);
  }

  /** Records a size in B, kB, MB or GB (gauge by default); other units are dropped as `bad_unit`. */
  addSize(
    name: string,
    value: number,
    requestId?: string | number,
    unit?: SizeUnit,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    this.helpers.addSize(name, value, requestId, unit, dimensions, type);
  }

  /** Records a percentage (gauge by default). */
  addPercent(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    this.helpers.addPercent(name, value, requestId, dimensions, type);
  }

  /** See WorkerMetricsApi.flush and MetricsFlusher.flush. */
  flush(force = false, carry?: MetricsSend): number {
    return this.flusher.flush(force, carry);
  }
}
