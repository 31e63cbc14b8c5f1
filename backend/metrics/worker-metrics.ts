/**
 * The worker's metrics cache: TorchServe's handler API (`addMetric`, `getMetric`,
 * `addCounter`/`addTime`/`addSize`/`addPercent`) built from the frontend's validated config,
 * buffering raw datapoints that `flush()` sends to the frontend as one `MetricsMessage`.
 */
import type { MetricsConfig, MetricType } from '../../schema/types.js';
import { METRICS_IPC_VERSION, METRICS_MESSAGE_TYPE } from '../../schema/ipc.js';
import type { MetricDecl, MetricsMessage, SeriesDecl, WorkerDropReason } from '../../schema/ipc.js';
import { PointBuffer } from './point-buffer.js';
import { LiveMetric, NoopMetric } from './worker-metric.js';
import type { MetricOwner, WorkerMetric } from './worker-metric.js';
import { BAD_SIZE_UNIT_MESSAGE, BAD_TIME_UNIT_MESSAGE, isSizeUnit, isTimeUnit, mapUnit } from './units.js';
import type { SizeUnit, TimeUnit } from './units.js';

/** Options of a `WorkerMetrics`. */
export interface WorkerMetricsOptions {
  readonly modelName: string;
  /**
   * Where flushes go; in a worker, `(m) => process.send!(m)`. Errors are caught and logged.
   * The typed arrays of `msg` are views of recycled buffers, valid until the next flush: send,
   * serialize or copy them by then (`process.send` serializes before it returns).
   */
  readonly send: (msg: MetricsMessage) => void;
  /** Register undeclared metrics from their first use; defaults to `config.autoDetect`. */
  readonly autoDetect?: boolean;
  /** Warnings (once per metric and reason); the worker passes its log channel; dropped when absent. */
  readonly log?: (msg: string) => void;
  /** Epoch-ms clock; defaults to `Date.now`. */
  readonly nowMs?: () => number;
}

/** Default dimensions the helpers fill in when the metric declares them (TorchServe). */
const MODEL_NAME_DIM = 'ModelName';
const LEVEL_DIM = 'Level';
const LEVEL_MODEL = 'Model';

/** The worker-side model metrics cache. Nothing here throws into handler code. */
export class WorkerMetrics implements MetricOwner {
  readonly buffer: PointBuffer;
  readonly maxSeriesPerMetric: number;
  private readonly modelName: string;
  private readonly send: (msg: MetricsMessage) => void;
  private readonly autoDetect: boolean;
  private readonly log: (msg: string) => void;
  private readonly metrics = new Map<string, LiveMetric>();
  private readonly frontendNames: ReadonlySet<string>;
  private readonly noops = new Map<string, NoopMetric>();
  private readonly warned = new Set<string>();
  private readonly totals: Record<string, number> = {};
  private delta: Partial<Record<WorkerDropReason, number>> = {};
  private deltaCount = 0;
  private pendingMetrics: MetricDecl[] = [];
  private pendingSeries: SeriesDecl[] = [];
  private nextSeriesId = 0;
  private seq = 0;

  constructor(config: MetricsConfig, opts: WorkerMetricsOptions) {
    this.modelName = opts.modelName;
    this.send = opts.send;
    this.autoDetect = opts.autoDetect ?? config.autoDetect;
    this.log = opts.log ?? ((): void => undefined);
    this.maxSeriesPerMetric = config.limits.maxSeriesPerMetric;
    this.buffer = new PointBuffer(config.limits.maxPointsPerFlush, () => this.flush(), opts.nowMs ?? Date.now);
    const frontendNames = new Set<string>();
    for (const spec of config.metrics) {
      if (spec.section !== 'model_metrics') {
        frontendNames.add(spec.name);
        continue;
      }
      this.metrics.set(spec.name, new LiveMetric(this, spec.name, spec.type, spec.unit, spec.dimensions));
    }
    this.frontendNames = frontendNames;
  }

  /** Datapoints dropped since start, by reason (cumulative; flushes carry deltas). */
  get dropped(): Readonly<Record<string, number>> {
    return this.totals;
  }

  /** The batch being handled; bound records carry these ids joined by `,` (TorchServe). */
  setRequestIds(ids: readonly string[]): void {
    this.buffer.setBatch(Array.isArray(ids) ? ids.filter((x) => typeof x === 'string') : []);
  }

  /**
   * Returns the metric `name`. A declared one is returned if `type` and `dimensionNames` (when
   * given) agree with the yaml, whose unit wins; an undeclared one is registered from this call
   * when auto-detect is on. Anything else gets a no-op metric that counts its drops.
   */
  addMetric(name: string, unit: string, dimensionNames?: readonly string[], type?: MetricType): WorkerMetric {
    const known = this.metrics.get(name);
    if (known !== undefined) {
      if (type !== undefined && type !== known.type) return this.typeMismatch(known, type);
      if (dimensionNames !== undefined && !sameNames(known.dimensions, dimensionNames)) {
        return this.noop(name, known.type, known.unit, known.dimensions, 'bad_dimensions',
          `Metric '${name}' has dimensions [${known.dimensions.join(', ')}], not [${describeNames(dimensionNames)}]`);
      }
      return known;
    }
    return this.detect(name, mapUnit(typeof unit === 'string' ? unit : ''), dimensionNames ?? [], type ?? 'counter');
  }

  /** Returns the metric `name` (of `type`, when given); unknown → a counted no-op, never throws. */
  getMetric(name: string, type?: MetricType): WorkerMetric {
    const known = this.metrics.get(name);
    if (known === undefined) {
      return this.noop(name, type ?? 'counter', '', [], 'unknown_metric',
        `Metric of type '${type ?? 'counter'}' and name '${name}' doesn't exist`);
    }
    if (type !== undefined && type !== known.type) return this.typeMismatch(known, type);
    return known;
  }

  /** Increments counter `name` (auto-detected as a `Count` counter with ModelName, Level). */
  addCounter(name: string, value: number, requestId?: string, dimensions?: Readonly<Record<string, string>>): void {
    this.helper(name, 'count', 'counter', true, value, requestId, dimensions);
  }

  /** Records a time in `ms` or `s` (gauge by default); other units are dropped as `bad_unit`. */
  addTime(name: string, value: number, requestId?: string, unit: TimeUnit = 'ms',
    dimensions?: Readonly<Record<string, string>>, type?: MetricType): void {
    if (!isTimeUnit(unit)) {
      this.drop('bad_unit', name, BAD_TIME_UNIT_MESSAGE);
      return;
    }
    this.helper(name, unit, type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /** Records a size in B, kB, MB or GB (gauge by default); other units are dropped as `bad_unit`. */
  addSize(name: string, value: number, requestId?: string, unit: SizeUnit = 'MB',
    dimensions?: Readonly<Record<string, string>>, type?: MetricType): void {
    if (!isSizeUnit(unit)) {
      this.drop('bad_unit', name, BAD_SIZE_UNIT_MESSAGE);
      return;
    }
    this.helper(name, unit, type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /** Records a percentage (gauge by default). */
  addPercent(name: string, value: number, requestId?: string,
    dimensions?: Readonly<Record<string, string>>, type?: MetricType): void {
    this.helper(name, 'percent', type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /**
   * Sends everything buffered since the last flush as one message (new metric and series
   * declarations, the datapoints, their request ids, the drop deltas) and returns how many
   * datapoints it carried. Sends nothing when there is nothing to say.
   */
  flush(): number {
    const nothing = this.buffer.count === 0 && this.pendingSeries.length === 0
      && this.pendingMetrics.length === 0 && this.deltaCount === 0;
    if (nothing) {
      this.buffer.tick();
      return 0;
    }
    const taken = this.buffer.take();
    this.buffer.tick();
    const msg: MetricsMessage = {
      type: METRICS_MESSAGE_TYPE,
      v: METRICS_IPC_VERSION,
      seq: this.seq++,
      metrics: this.pendingMetrics,
      series: this.pendingSeries,
      requestRuns: taken.requestRuns,
      requestIds: taken.requestIds,
      timeRuns: taken.timeRuns,
      dropped: this.delta,
      // The two big arrays last: V8's serializer then grows its buffer for them without
      // copying them again for small fields behind them (about 1 ns per datapoint).
      seriesIds: taken.seriesIds,
      values: taken.values,
    };
    this.pendingMetrics = [];
    this.pendingSeries = [];
    this.delta = {};
    this.deltaCount = 0;
    try {
      this.send(msg);
    } catch (e) {
      this.log(`[METRICS]Failed to send ${taken.count} datapoints to the frontend: ${(e as Error).message}`);
    }
    return taken.count;
  }

  /** @internal MetricOwner: allocates a series id and queues its declaration. */
  newSeries(metric: string, values: readonly string[]): number {
    const id = this.nextSeriesId++;
    this.pendingSeries.push({ id, metric, values });
    return id;
  }

  /** @internal MetricOwner: counts a drop; warns once per (metric, reason). */
  drop(reason: WorkerDropReason, metric: string, detail: string): void {
    this.totals[reason] = (this.totals[reason] ?? 0) + 1;
    this.delta[reason] = (this.delta[reason] ?? 0) + 1;
    this.deltaCount++;
    const key = `${reason}\u0000${metric}`;
    if (!this.warned.has(key)) {
      this.warned.add(key);
      this.log(`[METRICS]Failed to update metric with name:${metric}: ${detail} (${reason}; further drops of this kind are counted, not logged)`);
    }
  }

  /** Shared body of the four TorchServe helpers. */
  private helper(name: string, unit: string, type: MetricType, typeIsExplicit: boolean, value: number,
    requestId: string | undefined, dimensions: Readonly<Record<string, string>> | undefined): void {
    let metric: WorkerMetric | undefined = this.metrics.get(name);
    if (metric !== undefined) {
      // An omitted type means "as declared" (addCounter always means counter).
      if (typeIsExplicit && metric.type !== type) metric = this.typeMismatch(metric, type);
    } else {
      const names = Object.keys(dimensions ?? {});
      if (!names.includes(MODEL_NAME_DIM)) names.push(MODEL_NAME_DIM);
      if (!names.includes(LEVEL_DIM)) names.push(LEVEL_DIM);
      metric = this.detect(name, mapUnit(unit), names, type);
    }
    metric.addOrUpdate(value, this.withDefaults(metric.dimensions, dimensions), requestId);
  }

  /** A fresh object each call: default dimensions never leak between calls (TorchServe's bug). */
  private withDefaults(declared: readonly string[], given: Readonly<Record<string, string>> | undefined): Record<string, string> {
    const out: Record<string, string> = { ...(given ?? {}) };
    if (declared.includes(MODEL_NAME_DIM) && !Object.prototype.hasOwnProperty.call(out, MODEL_NAME_DIM)) {
      out[MODEL_NAME_DIM] = this.modelName;
    }
    if (declared.includes(LEVEL_DIM) && !Object.prototype.hasOwnProperty.call(out, LEVEL_DIM)) {
      out[LEVEL_DIM] = LEVEL_MODEL;
    }
    return out;
  }

  /** Registers an undeclared metric when auto-detect is on; its declaration rides the next flush. */
  private detect(name: string, unit: string, dimensionNames: readonly string[], type: MetricType): WorkerMetric {
    if (typeof name !== 'string' || name === '') {
      return this.noop(String(name), type, unit, [], 'unknown_metric', '`metric_name` must be a non-empty string');
    }
    if (this.frontendNames.has(name)) {
      return this.noop(name, type, unit, [], 'unknown_metric', `'${name}' is a frontend (ts_metrics) metric, not a model metric`);
    }
    if (!this.autoDetect) {
      return this.noop(name, type, unit, [], 'unknown_metric',
        `Metric '${name}' is not declared under model_metrics and auto-detect is off`);
    }
    if (!Array.isArray(dimensionNames) || dimensionNames.some((d) => typeof d !== 'string')
      || new Set(dimensionNames).size !== dimensionNames.length) {
      return this.noop(name, type, unit, [], 'bad_dimensions', '`dimension_names` should be a list of unique dimension name strings');
    }
    const dims = Object.freeze((dimensionNames as readonly string[]).slice());
    const metric = new LiveMetric(this, name, type, unit, dims);
    this.metrics.set(name, metric);
    this.pendingMetrics.push({ name, type, unit, dimensions: dims });
    return metric;
  }

  private typeMismatch(known: WorkerMetric, type: MetricType): WorkerMetric {
    return this.noop(known.name, type, known.unit, known.dimensions, 'type_mismatch',
      `Metric '${known.name}' is declared as a ${known.type}, not a ${type}`);
  }

  /** One no-op per (name, type, reason), so the warning is given once at creation. */
  private noop(name: string, type: MetricType, unit: string, dims: readonly string[],
    reason: WorkerDropReason, detail: string): NoopMetric {
    const key = `${reason}\u0000${type}\u0000${name}`;
    let m = this.noops.get(key);
    if (m === undefined) {
      m = new NoopMetric(this, name, type, unit, dims, reason, detail);
      this.noops.set(key, m);
      const warnKey = `${reason}\u0000${name}`;
      if (!this.warned.has(warnKey)) {
        this.warned.add(warnKey);
        this.log(`[METRICS]${detail}; its datapoints are dropped and counted as ${reason}`);
      }
    }
    return m;
  }
}

function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (!Array.isArray(b) || a.length !== b.length) return false;
  const set = new Set(a);
  for (const n of b as readonly string[]) if (!set.has(n)) return false;
  return new Set(b).size === b.length;
}

function describeNames(names: unknown): string {
  return Array.isArray(names) ? names.map(String).join(', ') : String(names);
}
