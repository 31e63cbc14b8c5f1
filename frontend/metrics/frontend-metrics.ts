/**
 * The frontend metrics cache: every metric of metrics.yaml plus the self-metrics, each bound
 * into the enabled sinks only. Sinks are chosen once, at construction.
 */
import * as os from 'node:os';
import type { MetricSpec, MetricsConfig, SinkMode, StatsdConfig } from '../../schema/types.js';
import type { FrontendMetric } from './api.js';
import { CachedMetric } from './metric.js';
import type { MetricHooks } from './metric.js';
import { SelfMetrics, SINK_ERRORS_METRIC } from './self-metrics.js';
import type { MetricsLog, Sink } from './sinks/sink.js';
import { PROMETHEUS_CONTENT_TYPE, PrometheusSink } from './sinks/prometheus.js';
import type { ExpositionFormat } from './exposition/negotiate.js';
import { StatsdSink } from './sinks/statsd.js';
import { TslogSink } from './sinks/tslog.js';

export type { BoundSeries, DimensionValues, FrontendMetric } from './api.js';
export type { DropReason } from './drop-reason.js';
export { DROP_REASONS } from './drop-reason.js';
export { SELF_METRIC_SPECS, SelfMetrics, SINK_ERRORS_METRIC } from './self-metrics.js';

/** How the frontend metrics are set up; options override the yaml. */
export interface FrontendMetricsOptions {
  /** tslog files: ts_metrics.log, model_metrics.log. */
  readonly logDir: string;
  /** Default `os.hostname()`. */
  readonly hostname?: string;
  /** Overrides config.modes (CLI --metrics-mode). */
  readonly modes?: readonly SinkMode[];
  /** Overrides config.statsd host and port. */
  readonly statsd?: { readonly host: string; readonly port: number };
  /** Node process metrics (prom-client defaults) on /metrics; default false. */
  readonly processMetrics?: boolean;
  /** Injectable epoch-ms clock for tests. */
  readonly nowMs?: () => number;
  /** Default: stderr. */
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
  /** Default 100 MB, 5 files (TorchServe's log4j settings). */
  readonly logRotation?: { readonly maxBytes: number; readonly keep: number };
  /** tslog buffer flush period in ms (default 200). */
  readonly tslogFlushMs?: number;
  /** Cap of each tslog file's queue in characters (default 4 Mi); lines beyond it are dropped and counted. */
  readonly tslogMaxQueueChars?: number;
  /** StatsD buffer flush period in ms (default 100). */
  readonly statsdFlushMs?: number;
}

const defaultLog: MetricsLog = (level, msg) => {
  process.stderr.write(`[metrics] ${level}: ${msg}\n`);
};

function sameShape(a: MetricSpec, b: MetricSpec): boolean {
  return (
    a.type === b.type &&
    a.hostLabel === b.hostLabel &&
    a.dimensions.length === b.dimensions.length &&
    a.dimensions.every((d, i) => d === b.dimensions[i])
  );
}

/** The frontend's metric cache and sink fan-out. */
export class FrontendMetrics {
  readonly self: SelfMetrics;
  readonly modes: readonly SinkMode[];
  readonly prometheusContentType = PROMETHEUS_CONTENT_TYPE;
  private readonly metrics = new Map<string, CachedMetric>();
  private readonly sinks: readonly Sink[];
  private readonly prometheus: PrometheusSink | null;
  private readonly tslog: TslogSink | null;
  private readonly log: MetricsLog;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly config: MetricsConfig,
    opts: FrontendMetricsOptions,
  ) {
    this.log = opts.log ?? defaultLog;
    const hostname = opts.hostname ?? os.hostname();
    const nowMs = opts.nowMs ?? Date.now;
    this.modes = Object.freeze([...new Set(opts.modes ?? config.modes)]);
    const sinks: Sink[] = [];
    for (const mode of this.modes) {
      try {
        sinks.push(this.makeSink(mode, opts, hostname, nowMs));
      } catch (err) {
        // One sink failing to start must not leave the server without the others.
        this.log('error', `metrics: cannot start the ${mode} sink: ${String(err)}`);
      }
    }
    this.sinks = sinks;
    this.prometheus = (sinks.find((s) => s instanceof PrometheusSink) as PrometheusSink | undefined) ?? null;
    this.tslog = (sinks.find((s) => s instanceof TslogSink) as TslogSink | undefined) ?? null;
    this.self = new SelfMetrics((spec, hooks, max) => this.create(spec, hooks, max), this.log);
    for (const spec of config.metrics) {
      if (this.metrics.has(spec.name)) {
        this.log('warn', `metrics: ${spec.name} is a built-in self-metric or already declared; the yaml entry is ignored`);
        continue;
      }
      this.create(spec, this.self, config.limits.maxSeriesPerMetric);
    }
  }

  private makeSink(mode: SinkMode, opts: FrontendMetricsOptions, hostname: string, nowMs: () => number): Sink {
    if (mode === 'tslog') {
      const rot = opts.logRotation ?? { maxBytes: 100 * 1024 * 1024, keep: 5 };
      return new TslogSink({
        logDir: opts.logDir,
        hostname,
        nowMs,
        log: this.log,
        maxBytes: rot.maxBytes,
        keep: rot.keep,
        flushMs: opts.tslogFlushMs,
        maxQueueChars: opts.tslogMaxQueueChars,
        onLost: (lines) => this.self.sinkError('tslog', lines),
        ownErrorMetric: SINK_ERRORS_METRIC,
      });
    }
    if (mode === 'prometheus') {
      return new PrometheusSink({ hostname, log: this.log, processMetrics: opts.processMetrics ?? false });
    }
    const config: StatsdConfig =
      opts.statsd === undefined ? this.config.statsd : { ...this.config.statsd, host: opts.statsd.host, port: opts.statsd.port };
    return new StatsdSink({
      config, hostname, log: this.log, flushMs: opts.statsdFlushMs, nowMs,
      // Send errors are asynchronous, so `self` exists by the time one is counted.
      onSendError: () => this.self.sinkError('statsd'),
      ownErrorMetric: SINK_ERRORS_METRIC,
    });
  }

  private create(spec: MetricSpec, hooks: MetricHooks, maxSeries: number): CachedMetric {
    const m = new CachedMetric(spec, this.sinks.map((s) => s.metric(spec)), maxSeries, hooks);
    this.metrics.set(spec.name, m);
    return m;
  }

  /** The metric named `name`, of any type; null if undeclared. */
  get(name: string): FrontendMetric | null {
    return this.metrics.get(name) ?? null;
  }

  /** The counter named `name`; null if undeclared or not a counter. */
  getCounter(name: string): FrontendMetric | null {
    const m = this.metrics.get(name);
    return m !== undefined && m.spec.type === 'counter' ? m : null;
  }

  /** The gauge named `name`; null if undeclared or not a gauge. */
  getGauge(name: string): FrontendMetric | null {
    const m = this.metrics.get(name);
    return m !== undefined && m.spec.type === 'gauge' ? m : null;
  }

  /** The histogram named `name`; null if undeclared or not a histogram. */
  getHistogram(name: string): FrontendMetric | null {
    const m = this.metrics.get(name);
    return m !== undefined && m.spec.type === 'histogram' ? m : null;
  }

  /**
   * Register an auto-detected model metric (first wins; same name again returns the existing
   * one if type and dimensions match, else null and a counted `type_mismatch` drop).
   */
  register(spec: MetricSpec): FrontendMetric | null {
    const existing = this.metrics.get(spec.name);
    if (existing !== undefined) {
      if (sameShape(existing.spec, spec)) return existing;
      this.self.dropped('type_mismatch', 1, spec.name);
      return null;
    }
    return this.create(Object.freeze({ ...spec, dimensions: Object.freeze([...spec.dimensions]) }), this.self, this.config.limits.maxSeriesPerMetric);
  }

  /** Prometheus exposition (text 0.0.4 or OpenMetrics); `names` filters families (`?name[]=`). */
  async prometheusText(names?: readonly string[], format: ExpositionFormat = 'text'): Promise<string> {
    if (this.prometheus === null) {
      const on = this.modes.length > 0 ? this.modes.join(', ') : 'none';
      return `# the prometheus sink is off (metrics modes: ${on}); enable it with --metrics-mode prometheus (comma list allowed) or add prometheus to mode: in metrics.yaml\n`;
    }
    try {
      return await this.prometheus.render(format, names);
    } catch (err) {
      return `# metrics rendering failed: ${String(err).replace(/\n/g, ' ')}\n`;
    }
  }

  /** Worker `source` exited: its values leave the gauges that merge live processes only. */
  processGone(source: string): void {
    this.prometheus?.processGone(source);
  }

  /** Write queued tslog lines out now; resolves once they are written (or counted lost). */
  flush(): Promise<void> {
    return this.tslog?.flush() ?? Promise.resolve();
  }

  /** Flush tslog files, close StatsD (bounded wait). Idempotent; never rejects. */
  close(): Promise<void> {
    if (this.closing === null) {
      this.closing = Promise.allSettled(this.sinks.map((s) => s.close())).then(() => undefined);
    }
    return this.closing;
  }
}
