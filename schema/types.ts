/**
 * The parsed, validated metrics configuration. Produced once by the loader in the frontend,
 * frozen, and handed to workers as-is (it is plain JSON), so no two loaders can disagree.
 */

/** Metric types, mirroring the schema's type keys. */
/** The metric types, in the order metrics.yaml lists them under a section; the one list of them. */
export const METRIC_TYPES = ['counter', 'gauge', 'histogram'] as const;
/** A metric's type: one of METRIC_TYPES. */
export type MetricType = (typeof METRIC_TYPES)[number];

/** Which side emits a metric: the frontend (`ts_metrics`) or model handlers (`model_metrics`). */
export type Section = 'ts_metrics' | 'model_metrics';

/** Output sinks; TorchServe's `log` is accepted in the yaml as an alias of `tslog`. */
export type SinkMode = 'tslog' | 'prometheus' | 'statsd' | 'otlp';

/** How StatsD tags are written: DogStatsD `|#k:v`, Telegraf `,k=v` in the name, or none. */
export type StatsdTagStyle = 'datadog' | 'telegraf' | 'none';

/** StatsD type of a non-time histogram: DogStatsD `h` (default) or `d`; `ms` means `h` (time histograms are always `ms`). */
export type StatsdHistogramType = 'ms' | 'h' | 'd';

/**
 * How a gauge written by several processes (frontend, workers) merges at render, in
 * prometheus_client's multi-process vocabulary; `live*` modes drop an exited process's value.
 */
export type GaugeMerge = 'sum' | 'max' | 'min' | 'last' | 'livesum' | 'livemax' | 'livemin' | 'livelast';

/** Every `GaugeMerge`, in documentation order. */
export const GAUGE_MERGES: readonly GaugeMerge[] = Object.freeze([
  'livelast',
  'livesum',
  'livemax',
  'livemin',
  'last',
  'sum',
  'max',
  'min',
]);

/** Where a piece of the yaml came from, for error messages that point at it. */
export interface SourcePos {
  readonly line: number;
  readonly col: number;
}

/** A metric's deprecation, as declared by `deprecated:` (see schema/config/stability.ts). */
export interface Deprecation {
  /** `X.Y`: the minor version that deprecated it; null for the notice-only string form. */
  readonly since: string | null;
  /** The metric to use instead, or null. */
  readonly replacement: string | null;
  /** The text of the string form (`deprecated: "use Foo"`), else null. */
  readonly note: string | null;
  /** `hidden_since: "X.Y"`: hidden from that minor version on (default since + 2); absent when not declared. */
  readonly hiddenSince?: string;
}

/** One declared metric, normalized. */
export interface MetricSpec {
  readonly name: string;
  /**
   * The stable key the server's code binds the metric by (`llm.time_to_first_token`), so its
   * name, help and buckets are the yaml's; absent for metrics bound by name (or not by the server).
   */
  readonly key?: string;
  readonly section: Section;
  readonly type: MetricType;
  /** Unit as written in the yaml (TorchServe prints it verbatim: `HandlerTime.ms`). */
  readonly unit: string;
  /**
   * Dimension names the caller supplies values for, in yaml order, hostname excluded.
   * The hostname is an automatic dimension (see `hostLabel`): callers never pass it.
   */
  readonly dimensions: readonly string[];
  /**
   * Label name carrying the hostname, rendered last (Prometheus label, StatsD tag); tslog
   * prints it in the `|#hostname:` segment instead. For ts_metrics: the declared `Hostname` /
   * `hostname` dimension if any, else null. For model_metrics: the declared one, else
   * `Hostname` (TorchServe appends it to every model metric).
   */
  readonly hostLabel: string | null;
  readonly help: string;
  /**
   * `help_verbatim: true`: # HELP is `help` exactly, without the unit suffix (and `help` carries
   * no deprecation notice): the vLLM profile's families show vLLM's own text. Absent otherwise.
   */
  readonly helpVerbatim?: true;
  /** Histogram bucket upper bounds, sorted ascending, without +Inf; empty for other types. */
  readonly buckets: readonly number[];
  /** Gauges only: how values from several processes merge (absent: `livelast`). */
  readonly merge?: GaugeMerge;
  /** Position of the entry in the yaml (0-based line/col are never used: these are 1-based). */
  readonly pos: SourcePos | null;
  /** Declared deprecation; absent or null when the metric is not deprecated. */
  readonly deprecated?: Deprecation | null;
  /**
   * Hidden: not exposed, not logged, not sent; records are no-ops. From the loader: `hidden: true`
   * in the yaml. After `resolveStability` (what the caches are given): also a deprecation older
   * than the server's version allows, unless shown by `--show-hidden-metrics-for-version`.
   */
  readonly hidden?: boolean;
}

export interface StatsdConfig {
  readonly host: string;
  readonly port: number;
  /** Prepended to every metric name, e.g. `tsserve.` (include the separator). */
  readonly prefix: string;
  readonly tagStyle: StatsdTagStyle;
  readonly histogramType: StatsdHistogramType;
}

export interface MetricsLimits {
  /** New series beyond this many for one metric fold into one overflow series. */
  readonly maxSeriesPerMetric: number;
  /** A worker flushes on its own when this many datapoints are buffered. */
  readonly maxPointsPerFlush: number;
  /** Most metrics auto-detection may register (per worker, and in the frontend overall). */
  readonly maxAutoDetectedMetrics?: number;
  /** Most dimensions a metric may have (declared or auto-detected); default 16. */
  readonly maxDimensionsPerMetric?: number;
}

/** The whole validated configuration. */
export interface MetricsConfig {
  /** Absolute path of the file it was loaded from ('' when built in memory). */
  readonly file: string;
  readonly modes: readonly SinkMode[];
  readonly statsd: StatsdConfig;
  readonly limits: MetricsLimits;
  /** Register undeclared model metrics from their first datapoint (TorchServe's auto-detect). */
  readonly autoDetect: boolean;
  /** Every declared metric, ts_metrics first, in file order. Names are unique across the file. */
  readonly metrics: readonly MetricSpec[];
}

/** One validation problem, printed as `FILE:LINE:COL: message`. */
export interface ConfigProblem {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly message: string;
}

/** The loader's answer: a config, or every problem found. Never both, never throws. */
export type LoadResult =
  | { readonly ok: true; readonly config: MetricsConfig }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

/** The label value used for a series that exceeded `maxSeriesPerMetric`. */
export const OVERFLOW_LABEL_VALUE = '__overflow__';
