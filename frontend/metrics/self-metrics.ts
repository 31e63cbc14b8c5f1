/**
 * The pipeline's own metrics, declared here (not in metrics.yaml) and rendered by every
 * enabled sink like any other `ts_metrics` metric.
 */
import type { MetricSpec, MetricType, SinkMode } from '../../schema/types.js';
import type { SelfMetricName } from '../../schema/metric-catalog.js';
import type { BoundSeries } from './api.js';
import type { DropReason } from '../../schema/metrics-api.js';
import { DROP_REASONS } from '../../schema/metrics-api.js';
import type { CachedMetric, MetricHooks } from './metric.js';
import type { MetricsLog } from './sinks/sink.js';
import type { LogFileError } from '../log/log.js';

function selfSpec(name: SelfMetricName, type: MetricType, dimensions: readonly string[], help: string): MetricSpec {
  return Object.freeze({
    name,
    section: 'ts_metrics',
    type,
    unit: 'Count',
    dimensions: Object.freeze([...dimensions]),
    hostLabel: 'Hostname',
    help,
    buckets: Object.freeze([]),
    pos: null,
  });
}

/** Built-in self-metric specs, in render order. Their names are reserved. */
export const SELF_METRIC_SPECS: readonly MetricSpec[] = Object.freeze([
  selfSpec(
    'tsserve_datapoints_dropped_total',
    'counter',
    ['reason'],
    'Datapoints dropped instead of recorded, by reason',
  ),
  selfSpec('tsserve_series', 'gauge', ['metric'], 'Live series per metric in the frontend metrics cache'),
  selfSpec(
    'tsserve_series_overflow_total',
    'counter',
    ['metric'],
    'Binds of a new series folded into the overflow series because the metric reached limits.maxSeriesPerMetric',
  ),
  selfSpec('tsserve_flush_batches_total', 'counter', [], 'Metric flush batches received from workers'),
  selfSpec('tsserve_flush_datapoints_total', 'counter', [], 'Datapoints received from workers in flush batches'),
  selfSpec(
    'tsserve_sink_errors_total',
    'counter',
    ['sink'],
    'Deliveries a sink failed to make (statsd: datagram sends; the datapoints a failed datagram carried are lost; tslog: metric lines lost)',
  ),
  selfSpec(
    'tsserve_worker_restarts_total',
    'counter',
    ['model_name'],
    'Workers that exited unexpectedly (a crash, a kill, a failed or timed-out load), per model; each is replaced after a backoff',
  ),
  selfSpec(
    'tsserve_front_restarts_total',
    'counter',
    [],
    'Front processes of --api-server-count that exited unexpectedly, or were killed for leaving 3 heartbeats unanswered, and were started again',
  ),
  selfSpec(
    'tsserve_requests_refused_total',
    'counter',
    ['model_name', 'reason'],
    'Requests answered 503 because a bounded queue was full (reason queue_full: a batching queue, a generation engine or a pipeline stage at --job-queue-size)',
  ),
  selfSpec(
    'tsserve_worker_output_faults_total',
    'counter',
    ['model_name', 'reason'],
    "Worker output the frontend did not take as sent, per model, by reason: malformed_result (a batch result of the wrong shape or with too few responses), extra_response (each response beyond the batch's requests), unknown_batch (a result for no batch in flight), log_line_truncated (a worker stdout/stderr line cut at 64 KiB), stdio_held (a worker that exited handled as gone after 1 s while a process it started held its stdout and stderr)",
  ),
  selfSpec(
    'tsserve_log_errors_total',
    'counter',
    ['file', 'reason'],
    'Log file failures, by file (ts_log.log, access_log.log, ts_metrics.log, model_metrics.log) and reason (rotation_failed: a size rotation that failed, the file written on and the rotation tried again at most once a minute; lines_lost: lines of ts_log.log or access_log.log not written, a full buffer or a failed write; lost metric log lines are in tsserve_sink_errors_total)',
  ),
  selfSpec(
    'tsserve_cache_evictions_total',
    'counter',
    ['cache'],
    'Entries a bounded in-memory table evicted at its bound, by cache (trace_ids: request id to W3C trace id for exemplars, 4096 entries, the oldest evicted; a datapoint of an evicted request keeps its exemplar without a trace_id)',
  ),
  selfSpec(
    'tsserve_spans_dropped_total',
    'counter',
    ['reason'],
    "Trace spans this process lost, by reason (queue_full: a finished span found the batch span processor's queue at OTEL_BSP_MAX_QUEUE_SIZE, default 2048; export_failed: the spans of an OTLP export the collector did not take)",
  ),
]);

/** The self-metric counting log file failures. */
export const LOG_ERRORS_METRIC = 'tsserve_log_errors_total';

/** The self-metric counting entries bounded tables evicted (evicting is how they stay bounded, not a loss of datapoints). */
export const CACHE_EVICTIONS_METRIC = 'tsserve_cache_evictions_total';

/** The bounded tables `tsserve_cache_evictions_total` counts, its `cache` label values. */
export type EvictingCache = 'trace_ids';

/** The self-metric counting trace spans lost. */
export const SPANS_DROPPED_METRIC = 'tsserve_spans_dropped_total';

/** Why spans were lost, `tsserve_spans_dropped_total`'s `reason` label values. */
export type SpanLoss = 'queue_full' | 'export_failed';

/** The self-metric counting sink delivery errors (a sink never sends its own error count). */
export const SINK_ERRORS_METRIC = 'tsserve_sink_errors_total';

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
  private readonly spansLost: CachedMetric;
  private readonly spansLostByReason = new Map<SpanLoss, BoundSeries>();
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
    const made = SELF_METRIC_SPECS.map((s) => create(s, this, Infinity));
    const [dropped, series, overflow, batches, points, sinkErrors] = made as [
      CachedMetric,
      CachedMetric,
      CachedMetric,
      CachedMetric,
      CachedMetric,
      CachedMetric,
    ];
    this.sinkErrors = sinkErrors;
    this.logErrors = made[SELF_METRIC_SPECS.findIndex((s) => s.name === LOG_ERRORS_METRIC)] as CachedMetric;
    this.evictions = made[SELF_METRIC_SPECS.findIndex((s) => s.name === CACHE_EVICTIONS_METRIC)] as CachedMetric;
    this.spansLost = made[SELF_METRIC_SPECS.findIndex((s) => s.name === SPANS_DROPPED_METRIC)] as CachedMetric;
    this.seriesGauge = series;
    this.overflowCounter = overflow;
    for (const reason of DROP_REASONS) this.droppedByReason.set(reason, dropped.bind([reason]));
    this.batches = batches.bind();
    this.points = points.bind();
  }

  /** Whether `name` is a built-in self-metric (metrics.yaml cannot redeclare it). */
  static isReserved(name: string): boolean {
    return SELF_METRIC_SPECS.some((s) => s.name === name);
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

  /** Count `n` trace spans lost for `reason` (bound on the first, so a healthy tracer shows no series). */
  spansDropped(reason: SpanLoss, n = 1): void {
    let s = this.spansLostByReason.get(reason);
    if (s === undefined) {
      s = this.spansLost.bind([reason]);
      this.spansLostByReason.set(reason, s);
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
