/**
 * The frontend metrics cache: every metric of metrics.yaml plus the self-metrics, each bound
 * into the enabled sinks only. Sinks are chosen once, at construction.
 */
import { claimExposedNames, exposureClashes } from '../../schema/config/exposed-names.js';
import type { ExposedOwner } from '../../schema/config/exposed-names.js';
import * as os from 'node:os';
import type { MetricSpec, MetricsConfig, SinkMode, StatsdConfig } from '../../schema/types.js';
import type { AutoLabels, DropReason } from '../../schema/metrics-api.js';
import { defaultAutoLabels } from '../../schema/metrics-api.js';
import { declarationProblems } from '../../schema/config/declaration.js';
import { DEFAULT_LIMITS } from '../../schema/config/normalize.js';
import {
  packageVersion,
  resolveStability,
  showHiddenProblem,
  stabilitySummary,
} from '../../schema/config/stability.js';
import type { FrontendMetric } from './api.js';
import { CachedMetric, HiddenMetric } from './metric.js';
import type { MetricHooks } from './metric.js';
import { LOG_ERRORS_METRIC, SelfMetrics, SINK_ERRORS_METRIC } from './self-metrics.js';
import { traceIds } from './exposition/trace-ids.js';
import type { MetricsLog, Sink } from './sinks/sink.js';
import { PROMETHEUS_CONTENT_TYPE, PrometheusSink } from './sinks/prometheus.js';
import type { ExpositionFormat } from './exposition/negotiate.js';
import type { MetricCells } from './metric-cells.js';
import type { ProcessPeers } from './exposition/process-metrics.js';
import { StatsdSink } from './sinks/statsd.js';
import { OtlpSink } from './sinks/otlp.js';
import type { OtlpSettings } from './otlp/otlp-settings.js';
import { otlpMetricsSettings } from './otlp/otlp-settings.js';
import { TslogSink } from './sinks/tslog.js';
import { LOG_KEEP, LOG_MAX_BYTES } from '../log/rotating-file-options.js';

export type { BoundSeries, DimensionValues, FrontendMetric } from './api.js';
export type { DropReason } from '../../schema/metrics-api.js';
export { DROP_REASONS } from '../../schema/metrics-api.js';
export { SelfMetrics, SINK_ERRORS_METRIC } from './self-metrics.js';

/** How the frontend metrics are set up; options override the yaml. */
export interface FrontendMetricsOptions {
  /** tslog files: ts_metrics.log, model_metrics.log. */
  readonly logDir: string;
  /** Default `os.hostname()`. */
  readonly hostname?: string;
  /** The labels the server fills in (ordered); default `{hostname}` from `hostname`. */
  readonly autoLabels?: AutoLabels;
  /** The server's version, for deprecations; default package.json's. Injectable for tests. */
  readonly serverVersion?: string;
  /** `--show-hidden-metrics-for-version X.Y`: show what the previous minor version showed. */
  readonly showHiddenMetricsForVersion?: string | null;
  /** Overrides config.modes (CLI --metrics-mode). */
  readonly modes?: readonly SinkMode[];
  /** Overrides config.statsd host and port. */
  readonly statsd?: { readonly host: string; readonly port: number };
  /** Node process metrics (prom-client defaults) on /metrics; default false. */
  readonly processMetrics?: boolean;
  /** Other processes' process metrics (front processes), shown with a `pid` label. */
  readonly processPeers?: ProcessPeers;
  /** Injectable epoch-ms clock for tests. */
  readonly nowMs?: () => number;
  /** Default: stderr. */
  readonly log?: (level: 'info' | 'warn' | 'error', msg: string) => void;
  /** Default 100 MB, 5 files (TorchServe's log4j settings). */
  readonly logRotation?: { readonly maxBytes: number; readonly keep: number };
  /** tslog buffer flush period in ms (default 200). */
  readonly tslogFlushMs?: number;
  /** Cap of each tslog file's queue in characters (default TSLOG_MAX_QUEUE_CHARS, 32 Mi); lines beyond it are dropped and counted. */
  readonly tslogMaxQueueChars?: number;
  /** StatsD buffer flush period in ms (default 100). */
  readonly statsdFlushMs?: number;
  /** Where the otlp sink exports (default: OpenTelemetry's defaults on 127.0.0.1, every 60 s). */
  readonly otlp?: OtlpSettings;
}

/** OpenTelemetry's defaults (no flag, no environment): 127.0.0.1:4318, every 60 s, cumulative. */
function otlpDefaults(): OtlpSettings {
  const r = otlpMetricsSettings(null, {}, 'tsserve');
  if ('problems' in r) throw new Error(r.problems.join('; '));
  return r.settings;
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

/** Why the frontend refused a metric a worker auto-detected. */
export interface Refusal {
  readonly reason: DropReason;
  readonly why: string;
}

/** The frontend's metric cache and sink fan-out. */
export class FrontendMetrics {
  readonly self: SelfMetrics;
  readonly modes: readonly SinkMode[];
  readonly prometheusContentType = PROMETHEUS_CONTENT_TYPE;
  /** The config with hidden metrics resolved: what the workers must be given. */
  readonly config: MetricsConfig;
  /** The labels the server fills in; the workers get them in their init message. */
  readonly autoLabels: AutoLabels;
  /** False when no sink runs (`--metrics-mode off`): the workers' caches are no-ops then. */
  readonly enabled: boolean;
  private readonly metrics = new Map<string, CachedMetric | HiddenMetric>();
  /** The yaml's `key:` → its metric (the code binds the families it fills by key). */
  private readonly keyed = new Map<string, CachedMetric | HiddenMetric>();
  /** Every name the rendered metrics take in the exposition (`X_count`, `X_total`…), so an auto-detected one cannot clash. */
  private readonly exposed = new Map<string, ExposedOwner>();
  private readonly maxAutoDetected: number;
  private autoDetected = 0;
  private readonly sinks: readonly Sink[];
  private readonly prometheus: PrometheusSink | null;
  private readonly tslog: TslogSink | null;
  private readonly otlp: OtlpSink | null;
  private readonly log: MetricsLog;
  private closing: Promise<void> | null = null;
  /** Stops counting the process-wide trace id table's evictions in this cache's self-metrics. */
  private readonly stopCountingTraceEvictions: () => void;

  constructor(config: MetricsConfig, opts: FrontendMetricsOptions) {
    this.log = opts.log ?? defaultLog;
    const version = opts.serverVersion ?? packageVersion();
    let showHidden = opts.showHiddenMetricsForVersion ?? null;
    const badFlag = showHidden === null ? null : showHiddenProblem(version, showHidden);
    if (badFlag !== null) {
      this.log('warn', `metrics: ${badFlag}; hidden metrics stay hidden`);
      showHidden = null;
    }
    this.config = resolveStability(config, { version, showHiddenForVersion: showHidden });
    this.autoLabels = Object.freeze({ ...(opts.autoLabels ?? defaultAutoLabels(opts.hostname ?? os.hostname())) });
    const nowMs = opts.nowMs ?? Date.now;
    this.maxAutoDetected = config.limits.maxAutoDetectedMetrics ?? DEFAULT_LIMITS.maxAutoDetectedMetrics;
    this.modes = Object.freeze([...new Set(opts.modes ?? config.modes)]);
    this.enabled = this.modes.length > 0;
    const sinks: Sink[] = [];
    for (const mode of this.modes) {
      try {
        sinks.push(this.makeSink(mode, opts, nowMs));
      } catch (err) {
        // One sink failing to start must not leave the server without the others.
        this.log('error', `metrics: cannot start the ${mode} sink: ${String(err)}`);
      }
    }
    this.sinks = sinks;
    this.prometheus = (sinks.find((s) => s instanceof PrometheusSink) as PrometheusSink | undefined) ?? null;
    this.tslog = (sinks.find((s) => s instanceof TslogSink) as TslogSink | undefined) ?? null;
    this.otlp = (sinks.find((s) => s instanceof OtlpSink) as OtlpSink | undefined) ?? null;
    this.self = new SelfMetrics((spec, hooks, max) => this.create(spec, hooks, max), this.log);
    // The table is the process's (the HTTP layer fills it); the process's metrics count what it evicts.
    this.stopCountingTraceEvictions = traceIds.countEvictions(() => this.self.cacheEvicted('trace_ids'));
    for (const spec of this.config.metrics) {
      if (this.metrics.has(spec.name)) {
        this.log(
          'warn',
          `metrics: ${spec.name} is a built-in self-metric or already declared; the yaml entry is ignored`,
        );
        continue;
      }
      if (spec.hidden === true) this.metrics.set(spec.name, new HiddenMetric(spec));
      else this.create(spec, this.self, config.limits.maxSeriesPerMetric);
      if (spec.key !== undefined) this.keyed.set(spec.key, this.metrics.get(spec.name)!);
    }
    const summary = stabilitySummary(this.config);
    if (summary !== null) this.log('warn', summary);
  }

  private makeSink(mode: SinkMode, opts: FrontendMetricsOptions, nowMs: () => number): Sink {
    if (mode === 'tslog') {
      const rot = opts.logRotation ?? { maxBytes: LOG_MAX_BYTES, keep: LOG_KEEP };
      return new TslogSink({
        logDir: opts.logDir,
        nowMs,
        log: this.log,
        maxBytes: rot.maxBytes,
        keep: rot.keep,
        flushMs: opts.tslogFlushMs,
        maxQueueChars: opts.tslogMaxQueueChars,
        onLost: (lines) => this.self.sinkError('tslog', lines),
        ownErrorMetric: SINK_ERRORS_METRIC,
        onRotateFailed: (file) => this.self.logError(file, 'rotation_failed'),
        logErrorMetric: LOG_ERRORS_METRIC,
      });
    }
    if (mode === 'prometheus') {
      return new PrometheusSink({
        log: this.log,
        processMetrics: opts.processMetrics ?? false,
        ...(opts.processPeers !== undefined ? { processPeers: opts.processPeers } : {}),
      });
    }
    if (mode === 'otlp') {
      const settings = opts.otlp ?? otlpDefaults();
      return new OtlpSink({
        ...settings,
        log: this.log,
        nowMs,
        // Export results are asynchronous, so `self` exists by the time one is counted.
        onExportError: () => this.self.sinkError('otlp'),
      });
    }
    const config: StatsdConfig =
      opts.statsd === undefined
        ? this.config.statsd
        : { ...this.config.statsd, host: opts.statsd.host, port: opts.statsd.port };
    return new StatsdSink({
      config,
      log: this.log,
      flushMs: opts.statsdFlushMs,
      nowMs,
      // Send errors are asynchronous, so `self` exists by the time one is counted.
      onSendError: () => this.self.sinkError('statsd'),
      ownErrorMetric: SINK_ERRORS_METRIC,
    });
  }

  private create(spec: MetricSpec, hooks: MetricHooks, maxSeries: number): CachedMetric {
    const m = new CachedMetric(
      spec,
      this.sinks.map((s) => s.metric(spec)),
      maxSeries,
      hooks,
      this.autoLabels,
    );
    this.metrics.set(spec.name, m);
    claimExposedNames(spec.name, spec.type, '', this.exposed);
    return m;
  }

  /** The metric named `name`, of any type; null if undeclared. */
  get(name: string): FrontendMetric | null {
    return this.metrics.get(name) ?? null;
  }

  /** The metric whose yaml entry has `key: KEY`; null if no entry has it. */
  byKey(key: string): FrontendMetric | null {
    return this.keyed.get(key) ?? null;
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
   * one if type and dimensions match); else null and one drop counted with the refusal's reason.
   */
  register(spec: MetricSpec): FrontendMetric | null {
    const r = this.admit(spec);
    if (!('reason' in r)) return r;
    this.self.dropped(r.reason, 1, spec.name);
    return null;
  }

  /**
   * The metric an auto-detected declaration may record into, or why not: a frontend metric or a
   * self-metric (`forbidden_metric`), another shape (`type_mismatch`), a name the loader would
   * refuse (`invalid_name`), or one metric past `limits.maxAutoDetectedMetrics` (`auto_detect_cap`).
   */
  admit(spec: MetricSpec): FrontendMetric | Refusal {
    const existing = this.metrics.get(spec.name);
    if (existing !== undefined) {
      if (existing.spec.section !== 'model_metrics' || SelfMetrics.isReserved(spec.name)) {
        return {
          reason: 'forbidden_metric',
          why: `${spec.name} is a frontend metric; workers record model metrics only`,
        };
      }
      if (sameShape(existing.spec, spec)) return existing;
      return {
        reason: 'type_mismatch',
        why: `${spec.name} is a ${existing.spec.type} with dimensions [${existing.spec.dimensions.join(', ')}]`,
      };
    }
    const maxDims = this.config.limits.maxDimensionsPerMetric ?? DEFAULT_LIMITS.maxDimensionsPerMetric;
    const problem = declarationProblems(spec, true, maxDims)[0];
    if (problem !== undefined)
      return { reason: 'invalid_name', why: `${spec.name} cannot be auto-detected: ${problem.message}` };
    const clash = exposureClashes(spec.name, spec.type, this.exposed)[0];
    if (clash !== undefined) return { reason: 'invalid_name', why: `${spec.name} cannot be auto-detected: ${clash}` };
    if (this.autoDetected >= this.maxAutoDetected) {
      return {
        reason: 'auto_detect_cap',
        why: `${spec.name} cannot be auto-detected: limits.max_auto_detected_metrics (${this.maxAutoDetected}) reached`,
      };
    }
    this.autoDetected++;
    return this.create(
      Object.freeze({ ...spec, dimensions: Object.freeze([...spec.dimensions]) }),
      this.self,
      this.config.limits.maxSeriesPerMetric,
    );
  }

  /** Prometheus exposition (text 0.0.4 or OpenMetrics); `names` filters families (`?name[]=`). */
  async prometheusText(names?: readonly string[], format: ExpositionFormat = 'text'): Promise<string> {
    if (this.prometheus === null) {
      const on = this.modes.length > 0 ? this.modes.join(', ') : 'none';
      return `# the prometheus sink is off (metrics modes: ${on}); enable it with --metrics-mode prometheus (comma list allowed) or add prometheus to mode: in metrics.yaml\n`;
    }
    // A failed render rejects: the route answers 500, so Prometheus marks the scrape failed (up 0)
    // instead of taking a 200 with no samples and letting every series go stale.
    return this.prometheus.render(format, names);
  }

  /** The prometheus sink's cells, read in place (the status page's sampler); null when that sink is off. */
  cells(): MetricCells | null {
    return this.prometheus;
  }

  /** Worker `source` exited: its values leave the gauges that merge live processes, and are retired in the others. */
  processGone(source: string): void {
    this.prometheus?.processGone(source);
    this.otlp?.processGone(source);
  }

  /** Write queued tslog lines out now; resolves once they are written (or counted lost). */
  flush(): Promise<void> {
    return this.tslog?.flush() ?? Promise.resolve();
  }

  /** Flush tslog files, close StatsD (bounded wait). Idempotent; never rejects. */
  close(): Promise<void> {
    if (this.closing === null) {
      this.stopCountingTraceEvictions();
      this.closing = Promise.allSettled(this.sinks.map((s) => s.close())).then(() => undefined);
    }
    return this.closing;
  }
}
