/**
 * The pipeline's own metrics, declared in the `tsserve_metrics:` section of the bundled
 * metrics.yaml (`selfMetricSpecs`) and rendered by every enabled sink like any other
 * `ts_metrics` metric.
 */
import type { MetricSpec, SinkMode } from '../../schema/types.js';
import { selfMetricSpecs } from '../../schema/config/self-section.js';
import { SELF_METRICS } from '../../schema/metric-catalog.js';
import type { SelfMetricName } from '../../schema/metric-catalog.js';
import type { BoundSeries } from './api.js';
import type { DropReason } from '../../schema/metrics-api.js';
import { DROP_REASONS } from '../../schema/metrics-api.js';
import type { CachedMetric, MetricHooks } from './metric.js';
import type { MetricsLog } from './sinks/sink.js';
import type { LogFileError } from '../log/log.js';

/** The self-metric counting log file failures. */
export const LOG_ERRORS_METRIC: SelfMetricName = 'tsserve_log_errors_total';

/** The self-metric counting entries bounded tables evicted (evicting is how they stay bounded, not a loss of datapoints). */
export const CACHE_EVICTIONS_METRIC: SelfMetricName = 'tsserve_cache_evictions_total';

/** The bounded tables `tsserve_cache_evictions_total` counts, its `cache` label values. */
export type EvictingCache = 'trace_ids';

/** The self-metric counting sink delivery errors (a sink never sends its own error count). */
export const SINK_ERRORS_METRIC: SelfMetricName = 'tsserve_sink_errors_total';

/** Most distinct (metric, reason) pairs warned about; later ones are only counted. */
const MAX_WARNED = 1000;

/** Counts drops, series and flushes; the ingest calls `flushed` and `dropped`. */
export class SelfMetrics implements MetricHooks {
  private readonly droppedByReason = new Map<DropReason, BoundSeries>();
  private readonly seriesGauge: CachedMetric;
  private readonly overflowCounter: CachedMetric;
  private readonly seriesByMetric = new Map<string, BoundSeries>();
  private readonly overflowByMetric = new Map<string, BoundSeries>();
  private readonly batches: BoundSeries;
  private readonly points: BoundSeries;
  private readonly sinkErrors: CachedMetric;
  private readonly sinkErrorsBySink = new Map<SinkMode, BoundSeries>();
  private readonly logErrors: CachedMetric;
  private readonly logErrorsByKey = new Map<string, BoundSeries>();
  private readonly evictions: CachedMetric;
  private readonly evictionsByCache = new Map<EvictingCache, BoundSeries>();
  private readonly warned = new Set<string>();
  /** `tsserve_series` updates; queued because binding its own series creates series. */
  private readonly pendingSeries: [string, number][] = [];
  private draining = false;

  /**
   * `create` builds a cached metric in every sink, reporting to the given hooks. Self-metrics
   * are exempt from `maxSeriesPerMetric` (their label sets are bounded by the reasons and the
   * metric names), so they never overflow into themselves.
   */
  constructor(
    create: (spec: MetricSpec, hooks: MetricHooks, maxSeries: number) => CachedMetric,
    private readonly log: MetricsLog,
  ) {
    const made = new Map(selfMetricSpecs().map((s) => [s.name, create(s, this, Infinity)]));
    // Every name of SELF_METRICS has its spec (selfMetricSpecs throws otherwise).
    const metric = (name: SelfMetricName): CachedMetric => made.get(name) as CachedMetric;
    const dropped = metric('tsserve_datapoints_dropped_total');
    this.seriesGauge = metric('tsserve_series');
    this.overflowCounter = metric('tsserve_series_overflow_total');
    this.sinkErrors = metric(SINK_ERRORS_METRIC);
    this.logErrors = metric(LOG_ERRORS_METRIC);
    this.evictions = metric(CACHE_EVICTIONS_METRIC);
    for (const reason of DROP_REASONS) this.droppedByReason.set(reason, dropped.bind([reason]));
    this.batches = metric('tsserve_flush_batches_total').bind();
    this.points = metric('tsserve_flush_datapoints_total').bind();
  }

  /** Whether `name` is a built-in self-metric (metrics.yaml cannot redeclare it). */
  static isReserved(name: string): boolean {
    return (SELF_METRICS as readonly string[]).includes(name);
  }

  /** Count `n` dropped datapoints; warn once per (metric, reason). */
  dropped(reason: DropReason, n = 1, metric = ''): void {
    const s = this.droppedByReason.get(reason);
    if (s === undefined || !(n > 0)) return;
    s.record(n);
    const key = metric + '\u0000' + reason;
    if (this.warned.size < MAX_WARNED && !this.warned.has(key)) {
      this.warned.add(key);
      const what = metric === '' ? 'a datapoint' : `a datapoint of ${metric}`;
      this.log(
        'warn',
        `metrics: dropped ${what} (${reason}); further drops like it are only counted in tsserve_datapoints_dropped_total`,
      );
    }
  }

  /** Count one or more flush batches from workers and the datapoints they carried. */
  flushed(batches: number, datapoints: number): void {
    if (batches > 0) this.batches.record(batches);
    if (datapoints > 0) this.points.record(datapoints);
  }

  /** Count `n` failed deliveries of `sink` (bound on its first error, so a healthy sink shows no series). */
  sinkError(sink: SinkMode, n = 1): void {
    let s = this.sinkErrorsBySink.get(sink);
    if (s === undefined) {
      s = this.sinkErrors.bind([sink]);
      this.sinkErrorsBySink.set(sink, s);
    }
    s.record(n);
  }

  /** Count `n` failures of the log file named `file` (bound on its first, so a healthy file shows no series). */
  logError(file: string, reason: LogFileError, n = 1): void {
    const key = file + '\u0000' + reason;
    let s = this.logErrorsByKey.get(key);
    if (s === undefined) {
      s = this.logErrors.bind([file, reason]);
      this.logErrorsByKey.set(key, s);
    }
    s.record(n);
  }

  /** Count `n` entries `cache` evicted at its bound (bound on the first, so a table that never filled shows no series). */
  cacheEvicted(cache: EvictingCache, n = 1): void {
    let s = this.evictionsByCache.get(cache);
    if (s === undefined) {
      s = this.evictions.bind([cache]);
      this.evictionsByCache.set(cache, s);
    }
    s.record(n);
  }

  seriesCreated(metric: string, liveSeries: number): void {
    this.pendingSeries.push([metric, liveSeries]);
    if (this.draining) return;
    this.draining = true;
    try {
      for (let item = this.pendingSeries.shift(); item !== undefined; item = this.pendingSeries.shift()) {
        let s = this.seriesByMetric.get(item[0]);
        if (s === undefined) {
          s = this.seriesGauge.bind([item[0]]);
          this.seriesByMetric.set(item[0], s);
        }
        s.record(item[1]);
      }
    } finally {
      this.draining = false;
    }
  }

  /** Count `n` binds folded into `metric`'s overflow series (a worker's folds arrive in its flushes). */
  overflowed(metric: string, n = 1): void {
    let s = this.overflowByMetric.get(metric);
    if (s === undefined) {
      s = this.overflowCounter.bind([metric]);
      this.overflowByMetric.set(metric, s);
    }
    s.record(n);
  }

  sinkFailed(metric: string, err: unknown): void {
    this.dropped('sink_error', 1, metric);
    if (!this.warned.has(metric + '\u0000sink_error:detail') && this.warned.size < MAX_WARNED) {
      this.warned.add(metric + '\u0000sink_error:detail');
      this.log('error', `metrics: a sink failed recording ${metric}: ${String(err)}`);
    }
  }
}
