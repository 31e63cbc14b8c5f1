/**
 * The shapes both metrics caches share: the worker's (backend/metrics/) and the frontend's
 * (frontend/metrics/). One definition each, so the two sides cannot drift apart.
 */

/**
 * Why a datapoint was dropped. Every drop is counted in `tsserve_datapoints_dropped_total{reason}`
 * (a worker's drops travel as deltas in its flushes) and warned about once per (metric, reason);
 * a record call never throws.
 */
export type DropReason =
  /** NaN, ±Infinity or not a number at all. */
  | 'not_finite'
  /** A counter increment below zero (counters only go up). */
  | 'negative_counter'
  /** A finite counter increment that would make the counter's total overflow to Infinity. */
  | 'counter_overflow'
  /** Wrong number of dimension values, an unknown dimension name, or a non-string value. */
  | 'bad_dimensions'
  /** A request id that is not a string. */
  | 'bad_request_id'
  /** A datapoint for a metric that is neither declared nor auto-detectable. */
  | 'unknown_metric'
  /** A metric registered again with another type or other dimensions. */
  | 'type_mismatch'
  /** An IPC metrics message that does not have the expected shape. */
  | 'malformed_message'
  /** A sink threw while recording (the other sinks still got the datapoint). */
  | 'sink_error'
  /** A handler helper given a unit it does not take (`addTime` in `h`, `addSize` in `TB`). */
  | 'bad_unit'
  /** An auto-detected metric whose name or label names break the rules metrics.yaml follows. */
  | 'invalid_name'
  /** An auto-detected metric beyond `limits.max_auto_detected_metrics`. */
  | 'auto_detect_cap'
  /** A worker datapoint into a frontend (`ts_metrics`) metric or a self-metric. */
  | 'forbidden_metric'
  /** A worker datapoint that did not fit its bounded backlog while the IPC channel was full. */
  | 'ipc_backpressure'
  /** An event that did not fit a bounded queue between two reports (an engine's sampled KV block evictions). */
  | 'queue_full';

/**
 * Longest dimension value a handler may record (characters). A longer one is a `bad_dimensions`
 * drop: it would be a series of that size in every scrape and log line, and past about 64 KB a
 * StatsD datagram cannot carry it at all.
 */
export const MAX_DIMENSION_VALUE_CHARS = 1024;

/** Every drop reason, in a stable order (the self-metric binds one series per reason). */
export const DROP_REASONS: readonly DropReason[] = Object.freeze([
  'not_finite',
  'negative_counter',
  'counter_overflow',
  'bad_dimensions',
  'bad_request_id',
  'unknown_metric',
  'type_mismatch',
  'malformed_message',
  'sink_error',
  'bad_unit',
  'invalid_name',
  'auto_detect_cap',
  'forbidden_metric',
  'ipc_backpressure',
  'queue_full',
]);

const REASON_SET: ReadonlySet<string> = new Set(DROP_REASONS);

/** True when `s` is one of the drop reasons. */
export function isDropReason(s: unknown): s is DropReason {
  return typeof s === 'string' && REASON_SET.has(s);
}

/** Dimension values as callers pass them: by name (any order) or in declared order; automatic labels never. */
export type DimensionValues = readonly string[] | Readonly<Record<string, string>>;

/**
 * A series bound once: `record` does no lookup and no allocation. `requestId` stamps the
 * datapoint (the worker's bound records otherwise carry the batch's ids); `timeMs` is epoch ms
 * and `source` the worker a datapoint came from (the ingest sets it; gauges keep one value per
 * source), both honoured by the frontend only (the worker stamps its own cached clock). Never throws.
 */
export interface BoundSeries {
  record(value: number, requestId?: string, timeMs?: number, source?: string): void;
}

/** A series each record of which is a counted drop (its binding failed): the one such shape, on both sides. */
export class DroppingSeries implements BoundSeries {
  constructor(private readonly drop: () => void) {}

  record(): void {
    this.drop();
  }
}

/** The series that records nothing: a metric switched off, hidden or not declared (the one no-op series). */
export const NOOP_SERIES: BoundSeries = Object.freeze({ record(): void {} });

/**
 * Labels the server fills in itself, never the caller: ordered name → value (`hostname` today;
 * `stage`, `replica`, `worker` for pipelines). Decided once per process (the frontend's own, or
 * a worker's from its init message) and applied when a series is bound, never per record.
 */
export type AutoLabels = Readonly<Record<string, string>>;

/** The automatic label holding the host name; a metric renders it under its `hostLabel`. */
export const HOSTNAME_AUTO_LABEL = 'hostname';

/** The automatic labels of a process on host `hostname` (the only one today). */
export function defaultAutoLabels(hostname: string): AutoLabels {
  return Object.freeze({ [HOSTNAME_AUTO_LABEL]: hostname });
}
