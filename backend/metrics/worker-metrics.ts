/**
 * The worker's metrics cache: TorchServe's handler API (`addMetric`, `getMetric`,
 * `addCounter`/`addTime`/`addSize`/`addPercent`) built from the frontend's validated config,
 * buffering raw datapoints that `flush()` sends to the frontend as one `MetricsMessage`.
 */
import type { MetricsConfig, MetricType } from '../../schema/types.js';
import { METRICS_IPC_VERSION, METRICS_MESSAGE_TYPE } from '../../schema/ipc.js';
import type { MetricDecl, MetricsMessage, SeriesDecl } from '../../schema/ipc.js';
import type { AutoLabels, DropReason } from '../../schema/metrics-api.js';
import { declarationProblems } from '../../schema/config/declaration.js';
import { DEFAULT_LIMITS } from '../../schema/config/normalize.js';
import { DisabledWorkerMetrics } from './disabled-metrics.js';
import { PointBuffer } from './point-buffer.js';
import { clip, describeDimensionValues, show } from './dimensions.js';
import { LiveMetric, NoopMetric, ReorderedMetric, SilentMetric } from './worker-metric.js';
import type { MetricOwner, WorkerMetric } from './worker-metric.js';
import {
  BAD_SIZE_UNIT_MESSAGE,
  BAD_TIME_UNIT_MESSAGE,
  convertUnit,
  isSizeUnit,
  isTimeUnit,
  mapUnit,
  measureOf,
} from './units.js';
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

/**
 * Where flushes go. In a worker: `process.send(m, cb)`, whose `false` means the channel's
 * backlog is full; then nothing more is sent until `done` is called (the message was written).
 * Returning nothing means "not congested". Errors are caught and logged. The typed arrays of
 * `msg` are views of recycled buffers, valid until the next flush: send, serialize or copy them
 * by then (`process.send` serializes before it returns).
 */
export type MetricsSend = (msg: MetricsMessage, done: () => void) => unknown;

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

/** Default dimensions the helpers fill in when the metric declares them (TorchServe). */
const MODEL_NAME_DIM = 'ModelName';
const LEVEL_DIM = 'Level';
const LEVEL_MODEL = 'Model';

/** The types a metric can have; anything else a handler passes is refused before it is registered. */
const METRIC_TYPES: ReadonlySet<unknown> = new Set<MetricType>(['counter', 'gauge', 'histogram']);

/** Most distinct (metric, reason) pairs warned about, and no-op metrics kept; later ones are only counted. */
export const MAX_WARNED = 1000;

/** The cache `opts` asks for: live, or (metrics off) one that does nothing. Decided here, once. */
export function createWorkerMetrics(config: MetricsConfig, opts: WorkerMetricsOptions): WorkerMetricsApi {
  return opts.enabled === false ? new DisabledWorkerMetrics(opts.autoLabels ?? {}) : new WorkerMetrics(config, opts);
}

/** The worker-side model metrics cache. Nothing here throws into handler code. */
export class WorkerMetrics implements MetricOwner, WorkerMetricsApi {
  readonly buffer: PointBuffer;
  readonly maxSeriesPerMetric: number;
  readonly autoLabels: AutoLabels;
  private readonly modelName: string;
  private readonly send: MetricsSend;
  private readonly autoDetect: boolean;
  private readonly maxAutoDetected: number;
  /** `limits.max_dimensions_per_metric`: an auto-detected metric with more is refused. */
  private readonly maxDimensions: number;
  private detectedCount = 0;
  /** The batch being handled, for the helpers' numeric request ids (TorchServe's `idx`). */
  private batchIds: readonly string[] = [];
  private readonly log: (msg: string) => void;
  /** Declared (live, or silent when hidden) and auto-detected metrics. */
  private readonly metrics = new Map<string, LiveMetric | SilentMetric>();
  private readonly frontendNames: ReadonlySet<string>;
  private readonly noops = new Map<string, NoopMetric>();
  /** Declared metrics seen in the dimension order a handler gave addMetric, by name and order. */
  private readonly views = new Map<string, ReorderedMetric>();
  private readonly warned = new Set<string>();
  private readonly totals: Record<string, number> = {};
  private delta: Partial<Record<DropReason, number>> = {};
  private deltaCount = 0;
  private overflowDelta: Record<string, number> = {};
  private overflowCount = 0;
  private pendingMetrics: MetricDecl[] = [];
  private pendingSeries: SeriesDecl[] = [];
  private nextSeriesId = 0;
  private seq = 0;
  /** Sequence number of the send whose completion we wait for (0: the channel is not congested). */
  private congestedOn = 0;
  private sends = 0;

  constructor(config: MetricsConfig, opts: WorkerMetricsOptions) {
    this.modelName = opts.modelName;
    this.send = opts.send;
    this.autoLabels = Object.freeze({ ...(opts.autoLabels ?? {}) });
    this.autoDetect = opts.autoDetect ?? config.autoDetect;
    this.maxAutoDetected = config.limits.maxAutoDetectedMetrics ?? DEFAULT_LIMITS.maxAutoDetectedMetrics;
    this.maxDimensions = config.limits.maxDimensionsPerMetric ?? DEFAULT_LIMITS.maxDimensionsPerMetric;
    this.log = opts.log ?? ((): void => undefined);
    this.maxSeriesPerMetric = config.limits.maxSeriesPerMetric;
    this.buffer = new PointBuffer(
      config.limits.maxPointsPerFlush,
      () => this.flush(),
      opts.nowMs ?? Date.now,
      () => this.drop('ipc_backpressure', '', 'the IPC channel to the frontend is congested and the backlog is full'),
    );
    const frontendNames = new Set<string>();
    for (const spec of config.metrics) {
      if (spec.section !== 'model_metrics') {
        frontendNames.add(spec.name);
        continue;
      }
      // A hidden metric records nothing and counts nothing, decided here once.
      this.metrics.set(
        spec.name,
        spec.hidden === true
          ? new SilentMetric(spec.name, spec.type, spec.unit, spec.dimensions)
          : new LiveMetric(this, spec.name, spec.type, spec.unit, spec.dimensions),
      );
    }
    this.frontendNames = frontendNames;
  }

  /** Datapoints dropped since start, by reason (cumulative; flushes carry deltas). */
  get dropped(): Readonly<Record<string, number>> {
    return this.totals;
  }

  /** See WorkerMetricsApi.records. */
  records(name: string): boolean {
    const m = this.metrics.get(name);
    return m === undefined ? this.autoDetect && !this.frontendNames.has(name) : !(m instanceof SilentMetric);
  }

  /** The batch being handled; bound records carry these ids joined by `,` (TorchServe). */
  setRequestIds(ids: readonly string[]): void {
    this.batchIds = Array.isArray(ids) ? ids.filter((x) => typeof x === 'string') : [];
    this.buffer.setBatch(this.batchIds);
  }

  /**
   * Returns the metric `name`. A declared one is returned if `type` and `dimensionNames` (when
   * given) agree with the yaml, whose unit wins; an undeclared one is registered from this call
   * when auto-detect is on. Anything else gets a no-op metric that counts its drops.
   */
  addMetric(name: string, unit: string, dimensionNames?: readonly string[], type?: MetricType): WorkerMetric {
    try {
      return this.lookupOrDetect(name, unit, dimensionNames, type);
    } catch (e) {
      // Dimension names that throw when read (a Proxy, a getter): never into the handler.
      return this.noop(
        name,
        'counter',
        '',
        [],
        'bad_dimensions',
        `Metric '${clip(name)}': dimension names could not be read: ${clip(e)}`,
      );
    }
  }

  private lookupOrDetect(
    name: string,
    unit: string,
    dimensionNames: readonly string[] | undefined,
    type: MetricType | undefined,
  ): WorkerMetric {
    const known = this.metrics.get(name);
    if (known instanceof SilentMetric) return known;
    if (known !== undefined) {
      if (type !== undefined && type !== known.type) return this.typeMismatch(known, type);
      if (dimensionNames !== undefined && !sameNames(known.dimensions, dimensionNames)) {
        return this.noop(
          name,
          known.type,
          known.unit,
          known.dimensions,
          'bad_dimensions',
          `Metric '${name}' has dimensions [${known.dimensions.join(', ')}], not [${describeNames(dimensionNames)}]`,
        );
      }
      if (dimensionNames !== undefined && dimensionNames.some((d, i) => d !== known.dimensions[i]))
        return this.view(known, dimensionNames);
      return known;
    }
    return this.detect(name, mapUnit(typeof unit === 'string' ? unit : ''), dimensionNames ?? [], type ?? 'counter');
  }

  /** `known` with a list of values taken in `order` (one view per order; past MAX_WARNED, a fresh one). */
  private view(known: LiveMetric, order: readonly string[]): WorkerMetric {
    const key = [known.name, ...order].join('\u0000');
    let v = this.views.get(key);
    if (v === undefined) {
      v = new ReorderedMetric(known, Object.freeze(order.slice()));
      if (this.views.size < MAX_WARNED) this.views.set(key, v);
    }
    return v;
  }

  /** Returns the metric `name` (of `type`, when given); unknown → a counted no-op, never throws. */
  getMetric(name: string, type?: MetricType): WorkerMetric {
    const known = this.metrics.get(name);
    if (known === undefined && this.frontendNames.has(name)) return this.forbidden(name, type ?? 'counter');
    if (known === undefined) {
      return this.noop(
        name,
        type ?? 'counter',
        '',
        [],
        'unknown_metric',
        `Metric of type '${clip(type ?? 'counter')}' and name '${clip(name)}' doesn't exist`,
      );
    }
    if (known instanceof SilentMetric) return known;
    if (type !== undefined && type !== known.type) return this.typeMismatch(known, type);
    return known;
  }

  /** Increments counter `name` (auto-detected as a `Count` counter with ModelName, Level). */
  addCounter(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
  ): void {
    this.helper('addCounter', name, 'count', 'counter', true, value, requestId, dimensions);
  }

  /** Records a time in `ms` or `s` (gauge by default); other units are dropped as `bad_unit`. */
  addTime(
    name: string,
    value: number,
    requestId?: string | number,
    unit: TimeUnit = 'ms',
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    if (!isTimeUnit(unit)) {
      this.drop('bad_unit', name, BAD_TIME_UNIT_MESSAGE);
      return;
    }
    this.helper('addTime', name, unit, type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /** Records a size in B, kB, MB or GB (gauge by default); other units are dropped as `bad_unit`. */
  addSize(
    name: string,
    value: number,
    requestId?: string | number,
    unit: SizeUnit = 'MB',
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    if (!isSizeUnit(unit)) {
      this.drop('bad_unit', name, BAD_SIZE_UNIT_MESSAGE);
      return;
    }
    this.helper('addSize', name, unit, type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /** Records a percentage (gauge by default). */
  addPercent(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    this.helper('addPercent', name, 'percent', type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /**
   * Sends everything buffered since the last flush as one message (new metric and series
   * declarations, the datapoints, their request ids, the drop deltas) and returns how many
   * datapoints it carried. Sends nothing when there is nothing to say. With `carry` the message
   * goes out through it (inside another message) instead of `send`.
   */
  flush(force = false, carry?: MetricsSend): number {
    const nothing =
      this.buffer.count === 0 &&
      this.pendingSeries.length === 0 &&
      this.pendingMetrics.length === 0 &&
      this.deltaCount === 0 &&
      this.overflowCount === 0;
    if (nothing || (this.congestedOn !== 0 && !force)) {
      // Congested: everything stays buffered (points up to the cap, then counted drops) until the channel drains.
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
      overflowed: this.overflowDelta,
      // The two big arrays last: V8's serializer then grows its buffer for them without
      // copying them again for small fields behind them (about 1 ns per datapoint).
      seriesIds: taken.seriesIds,
      values: taken.values,
    };
    this.pendingMetrics = [];
    this.pendingSeries = [];
    this.delta = {};
    this.deltaCount = 0;
    this.overflowDelta = {};
    this.overflowCount = 0;
    const token = ++this.sends;
    let written = false;
    try {
      const ok = (carry ?? this.send)(msg, () => {
        written = true;
        if (this.congestedOn === token) this.drained();
      });
      if (ok === false && !written) this.congestedOn = token;
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

  /** The send we waited for was written: send what piled up meanwhile. */
  private drained(): void {
    this.congestedOn = 0;
    this.flush();
  }

  /** @internal MetricOwner: counts a drop; warns once per (metric, reason), for at most MAX_WARNED pairs. */
  drop(reason: DropReason, metric: string, detail: string | (() => string)): void {
    this.totals[reason] = (this.totals[reason] ?? 0) + 1;
    this.delta[reason] = (this.delta[reason] ?? 0) + 1;
    this.deltaCount++;
    const key = `${reason}\u0000${clip(metric)}`;
    if (this.warned.size < MAX_WARNED && !this.warned.has(key)) {
      this.warned.add(key);
      const what = metric === '' ? 'Dropped a datapoint' : `Failed to update metric with name:${clip(metric)}`;
      this.log(
        `[METRICS]${what}: ${typeof detail === 'string' ? detail : detail()} (${reason}; further drops of this kind are counted, not logged)`,
      );
    }
  }

  /** @internal MetricOwner: counts a fold into `metric`'s overflow series. */
  overflowed(metric: string): void {
    this.overflowDelta[metric] = (this.overflowDelta[metric] ?? 0) + 1;
    this.overflowCount++;
  }

  /** Shared body of the four TorchServe helpers. */
  private helper(
    call: string,
    name: string,
    unit: string,
    type: MetricType,
    typeIsExplicit: boolean,
    value: number,
    requestId: string | number | undefined,
    dimensions: Readonly<Record<string, string>> | undefined,
  ): void {
    let metric: WorkerMetric | undefined = this.metrics.get(name);
    if (metric instanceof SilentMetric) return;
    if (
      dimensions !== undefined &&
      dimensions !== null &&
      (typeof dimensions !== 'object' || Array.isArray(dimensions))
    ) {
      // Read by its keys, a list would name labels "0", "1"… (and a string its characters).
      this.drop(
        'bad_dimensions',
        name,
        `dimensions must be an object of name: value (e.g. {MethodName: 'preprocess'}; ` +
          `TorchServe's [Dimension(name, value)]), not ${Array.isArray(dimensions) ? 'a list' : `a ${typeof dimensions}`}`,
      );
      return;
    }
    if (metric !== undefined) {
      // An omitted type means "as declared" (addCounter always means counter).
      if (typeIsExplicit && metric.type !== type) metric = this.typeMismatch(metric, type);
    } else {
      let names: string[];
      try {
        names = Object.keys(dimensions ?? {});
      } catch (e) {
        this.drop('bad_dimensions', name, `Dimension values could not be read: ${show(e)}`);
        return;
      }
      if (!names.includes(MODEL_NAME_DIM)) names.push(MODEL_NAME_DIM);
      if (!names.includes(LEVEL_DIM)) names.push(LEVEL_DIM);
      metric = this.detect(name, mapUnit(unit), names, type);
    }
    let values: Record<string, string>;
    try {
      values = this.withDefaults(metric.dimensions, dimensions);
    } catch (e) {
      // A dimensions object whose keys or values throw when read (a Proxy, a getter): never into the handler.
      this.drop('bad_dimensions', metric.name, `Dimension values could not be read: ${show(e)}`);
      return;
    }
    // The call's unit, converted to the metric's: a time in s on a metric declared in ms is true in ms.
    const converted = convertUnit(value, unit, metric.unit);
    if (converted === undefined && call !== 'addCounter' && this.unitConflict(call, unit, metric)) return;
    metric.addOrUpdate(converted ?? value, values, typeof requestId === 'number' ? this.batchId(requestId) : requestId);
  }

  /**
   * A time, size or percentage recorded into a metric that measures another of them (`addTime`
   * into a metric in kB) is dropped: the sinks print the metric's unit, so the number would be
   * read as that. A count or a unit of its own (`CallCount`, `request`) takes any value as
   * given, as TorchServe does (the yaml's unit wins).
   */
  private unitConflict(call: string, unit: string, metric: WorkerMetric): boolean {
    const given = measureOf(unit);
    const declared = measureOf(metric.unit);
    if (given === undefined || declared === undefined || given === declared || metric instanceof NoopMetric)
      return false;
    this.drop(
      'bad_unit',
      metric.name,
      () =>
        `it is declared in ${metric.unit} (a ${declared}); ${call} records a ${given} in ${unit}, which would be read as ${metric.unit}`,
    );
    return true;
  }

  /**
   * TorchServe's helpers take `idx`, the request's index in the batch: its id; any other number
   * is no request of the batch, and TorchServe then stamps the batch's ids, as undefined does.
   */
  private batchId(idx: number): string | undefined {
    return Number.isInteger(idx) && idx >= 0 && idx < this.batchIds.length ? this.batchIds[idx] : undefined;
  }

  /** A fresh object each call: default dimensions never leak between calls (TorchServe's bug). */
  private withDefaults(
    declared: readonly string[],
    given: Readonly<Record<string, string>> | undefined,
  ): Record<string, string> {
    const out: Record<string, string> = { ...(given ?? {}) };
    if (declared.includes(MODEL_NAME_DIM) && !Object.prototype.hasOwnProperty.call(out, MODEL_NAME_DIM)) {
      out[MODEL_NAME_DIM] = this.modelName;
    }
    if (declared.includes(LEVEL_DIM) && !Object.prototype.hasOwnProperty.call(out, LEVEL_DIM)) {
      out[LEVEL_DIM] = LEVEL_MODEL;
    }
    return out;
  }

  /**
   * Registers an undeclared metric when auto-detect is on, under the loader's own naming rules
   * and within `limits.maxAutoDetectedMetrics`; its declaration rides the next flush.
   */
  private detect(name: string, unit: string, dimensionNames: readonly string[], type: MetricType): WorkerMetric {
    if (typeof name !== 'string' || name === '') {
      return this.noop(name, type, unit, [], 'unknown_metric', '`metric_name` must be a non-empty string');
    }
    const shown = clip(name);
    if (!METRIC_TYPES.has(type)) {
      // Declared to the frontend, an unknown type would make it refuse the whole flush (and every
      // series declared in it, so later datapoints of other metrics would be lost too).
      return this.noop(
        name,
        'counter',
        unit,
        [],
        'type_mismatch',
        `Metric '${shown}' cannot be auto-detected: type ${describeDimensionValues(type)} is not counter, gauge or histogram`,
      );
    }
    if (this.frontendNames.has(name)) return this.forbidden(name, type);
    if (!this.autoDetect) {
      return this.noop(
        name,
        type,
        unit,
        [],
        'unknown_metric',
        `Metric '${shown}' is not declared under model_metrics and auto-detect is off`,
      );
    }
    if (!Array.isArray(dimensionNames)) {
      return this.noop(
        name,
        type,
        unit,
        [],
        'bad_dimensions',
        `Metric '${shown}' cannot be auto-detected: its dimension names should be a list of strings, not ${describeDimensionValues(dimensionNames)}`,
      );
    }
    const problem =
      declarationProblems({ name, type, dimensions: dimensionNames }, true, this.maxDimensions)[0]?.message ??
      this.autoLabelProblem(dimensionNames as readonly string[]);
    if (problem !== undefined) {
      return this.noop(name, type, unit, [], 'invalid_name', `Metric '${shown}' cannot be auto-detected: ${problem}`);
    }
    if (this.detectedCount >= this.maxAutoDetected) {
      return this.noop(
        name,
        type,
        unit,
        [],
        'auto_detect_cap',
        `Metric '${shown}' cannot be auto-detected: limits.max_auto_detected_metrics (${this.maxAutoDetected}) reached`,
      );
    }
    this.detectedCount++;
    const dims = Object.freeze((dimensionNames as readonly string[]).slice());
    const metric = new LiveMetric(this, name, type, unit, dims);
    this.metrics.set(name, metric);
    this.pendingMetrics.push({ name, type, unit, dimensions: dims });
    return metric;
  }

  /**
   * A dimension named like one of this worker's automatic labels (beyond the hostname, which
   * `declarationProblems` covers): the frontend fills it in, so a handler may not pass it.
   */
  private autoLabelProblem(dimensionNames: readonly string[]): string | undefined {
    const d = dimensionNames.find((n) => Object.prototype.hasOwnProperty.call(this.autoLabels, n));
    return d === undefined
      ? undefined
      : `dimension "${d}" is an automatic label, filled in by the server; leave it out`;
  }

  /** A frontend (ts_metrics) metric: declared, but not the worker's to record. */
  private forbidden(name: string, type: MetricType): WorkerMetric {
    return this.noop(
      name,
      type,
      '',
      [],
      'forbidden_metric',
      `'${clip(name)}' is a frontend (ts_metrics) metric; a worker records model metrics only`,
    );
  }

  private typeMismatch(known: WorkerMetric, type: MetricType): WorkerMetric {
    return this.noop(
      known.name,
      type,
      known.unit,
      known.dimensions,
      'type_mismatch',
      `Metric '${known.name}' is declared as a ${known.type}, not a ${show(type)}`,
    );
  }

  /**
   * One no-op per (name, type, reason), so the warning is given once at creation; past
   * MAX_WARNED of them (a handler inventing names) a fresh one each time, neither kept nor logged.
   */
  private noop(
    name: unknown,
    type: MetricType,
    unit: string,
    dims: readonly string[],
    reason: DropReason,
    detail: string,
  ): NoopMetric {
    // Cut: a handler inventing long names must not fill the tables (names past the cut share one).
    const shown = clip(name);
    const key = `${reason}\u0000${clip(type)}\u0000${shown}`;
    let m = this.noops.get(key);
    if (m === undefined) {
      m = new NoopMetric(this, shown, type, unit, dims, reason, detail);
      if (this.noops.size >= MAX_WARNED) return m;
      this.noops.set(key, m);
      // The key drop() gives this metric's later drops (it cuts the name it is given: this one).
      const warnKey = `${reason}\u0000${clip(shown)}`;
      if (this.warned.size < MAX_WARNED && !this.warned.has(warnKey)) {
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
  return clip(Array.isArray(names) ? names.map(show).join(', ') : names);
}
