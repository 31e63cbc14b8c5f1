/**
 * Folds workers' metrics flushes (`schema/ipc.ts`) into the frontend's long-lived series.
 *
 * Each (worker, seriesId) is bound once to a `BoundSeries` when the worker declares it; a
 * datapoint is then an array index and a `record`. A worker that dies takes only its series
 * table with it: what it flushed is already in the frontend's series, so counters never go down.
 * A worker's series carry the automatic labels of its init message, which the frontend wrote:
 * `started` hands them over, and every series of that worker is bound with them (the worker
 * never sends them, so it cannot forge them).
 */
import { decodeMetricsMessage, forEachSegment, isMetricsMessageType } from '../../schema/ipc.js';
import type { MetricDecl, MetricsMessage, SeriesDecl } from '../../schema/ipc.js';
import type { MetricSpec } from '../../schema/types.js';
import type { AutoLabels } from '../../schema/metrics-api.js';
import { DroppingSeries } from '../../schema/metrics-api.js';
import { presetBuckets, presetForUnit } from '../../schema/config/presets.js';
import { sameNameSet } from '../../schema/config/names.js';
import type { BoundSeries, DropReason, FrontendMetric, FrontendMetrics } from './frontend-metrics.js';

/** Options of a `MetricsIngest`. */
export interface MetricsIngestOptions {
  /** Problems worth a line (once per worker or per metric); default stderr. */
  readonly log?: (msg: string) => void;
  /** Bound on one worker's series ids (its table's length); default `MAX_WORKER_SERIES`. */
  readonly maxWorkerSeries?: number;
}

/**
 * Most series ids one worker incarnation may declare (2^20, 8 MiB of table): its ids are dense
 * from 0 and each metric folds past `max_series_per_metric`, so only a worker that sends messages
 * of its own making (a handler calling process.send) gets near it. Past it a declaration is a
 * malformed message, counted, and its datapoints are dropped.
 */
export const MAX_WORKER_SERIES = 1 << 20;

/** Most auto-detected metric names one worker's table keeps (`max_auto_detected_metrics`' ceiling). */
export const MAX_WORKER_DETECTED = 10_000;

/** The part of `FrontendMetrics` the ingest uses (a structural type, so tests can fake it). */
export type IngestTarget = Pick<FrontendMetrics, 'get' | 'admit' | 'self'> &
  Partial<Pick<FrontendMetrics, 'processGone'>>;

/**
 * What a worker pool hands its workers' metrics to (`MetricsIngest`): each worker process gives
 * it every message straight (a result's `metrics` included), and the pool announces and
 * forgets the worker incarnations.
 */
export interface WorkerMetricsIngest {
  /** A message of worker `workerKey`; false when it is not a metrics message (route it elsewhere). */
  handle(workerKey: string, msg: unknown): boolean;
  /** Worker `workerKey` is gone, after its last message. */
  forget(workerKey: string): void;
  /** Worker `workerKey` is forked with these automatic labels in its init: its series carry them. */
  started?(workerKey: string, autoLabels: AutoLabels): void;
}

/** What the ingest remembers about one worker incarnation. */
interface WorkerState {
  /** Bound series by the worker's dense series id. */
  readonly bounds: BoundSeries[];
  /** Auto-detected metrics this worker declared: its dimension order, and the frontend metric or why not. */
  readonly detected: Map<string, { readonly names: readonly string[]; readonly metric: FrontendMetric | DropReason }>;
  warnedMalformed: boolean;
  warnedUnknownSeries: boolean;
  warnedForbidden: boolean;
}

/** Receives `tsserve.metrics` messages from workers and records them in the frontend cache. */
export class MetricsIngest implements WorkerMetricsIngest {
  private readonly workers = new Map<string, WorkerState>();
  /** Automatic labels by worker, as its init message gave them; absent: the frontend's own. */
  private readonly autoLabels = new Map<string, AutoLabels>();
  /** Front processes, and the frontend metrics each may record (a worker records model metrics only). */
  private readonly fronts = new Map<string, ReadonlySet<string>>();
  private readonly log: (msg: string) => void;
  private readonly maxWorkerSeries: number;

  constructor(
    private readonly metrics: IngestTarget,
    opts: MetricsIngestOptions = {},
  ) {
    this.log = opts.log ?? ((m) => process.stderr.write(`[metrics] warn: ${m}\n`));
    this.maxWorkerSeries = opts.maxWorkerSeries ?? MAX_WORKER_SERIES;
  }

  /**
   * Handles one IPC message from worker `workerKey`. Returns false when it is not a metrics
   * message (route it elsewhere), true otherwise — a malformed one included, which is counted
   * as `malformed_message` and logged once per worker. Never throws.
   */
  handle(workerKey: string, msg: unknown): boolean {
    if (!isMetricsMessageType(msg)) return false;
    const state = this.stateOf(workerKey);
    const decoded = decodeMetricsMessage(msg);
    if ('error' in decoded) {
      this.malformed(workerKey, state, decoded.error);
      return true;
    }
    try {
      this.ingest(workerKey, state, decoded);
    } catch (err) {
      // Only a bug can land here (records never throw); keep the frontend serving regardless.
      this.malformed(workerKey, state, `ingest failed: ${String(err)}`);
    }
    return true;
  }

  /**
   * Worker `workerKey` was started with `autoLabels` in its init message: its series are bound
   * with them (call before its first message; a worker never announced gets the frontend's own).
   */
  started(workerKey: string, autoLabels: AutoLabels): void {
    this.autoLabels.set(workerKey, Object.freeze({ ...autoLabels }));
  }

  /**
   * `source` is a front process (`--api-server-count`): its flushes are a worker's, but its
   * series are bound to the frontend metrics `names` (a model metric or any other is refused).
   */
  acceptFrom(source: string, names: ReadonlySet<string>): void {
    this.fronts.set(source, names);
  }

  /** Worker incarnations whose series tables are held (the live ones: `forget` drops a dead one's). */
  get incarnations(): number {
    return this.workers.size;
  }

  /**
   * Forgets a worker incarnation's series table (call when it exits, after its last message);
   * gauges merged over live processes drop its values, the others fold them into one retired
   * value, so a crash loop leaves nothing behind per incarnation.
   */
  forget(workerKey: string): void {
    this.workers.delete(workerKey);
    this.autoLabels.delete(workerKey);
    this.fronts.delete(workerKey);
    this.metrics.processGone?.(workerKey);
  }

  private stateOf(workerKey: string): WorkerState {
    let s = this.workers.get(workerKey);
    if (s === undefined) {
      s = {
        bounds: [],
        detected: new Map(),
        warnedMalformed: false,
        warnedUnknownSeries: false,
        warnedForbidden: false,
      };
      this.workers.set(workerKey, s);
    }
    return s;
  }

  private malformed(workerKey: string, state: WorkerState, why: string): void {
    this.metrics.self.dropped('malformed_message', 1);
    if (!state.warnedMalformed) {
      state.warnedMalformed = true;
      this.log(
        `metrics: worker ${workerKey} sent a malformed metrics message (${why}); it was dropped; further ones are only counted`,
      );
    }
  }

  /** A series id past the bound: counted as malformed and warned once per worker; the rest of the message is kept. */
  private pastBound(workerKey: string, state: WorkerState, id: number): void {
    this.metrics.self.dropped('malformed_message', 1);
    if (state.warnedMalformed) return;
    state.warnedMalformed = true;
    this.log(
      `metrics: worker ${workerKey} declared series id ${id}, past the ${this.maxWorkerSeries} one worker may declare; that declaration and its datapoints are dropped; further ones are only counted`,
    );
  }

  private ingest(workerKey: string, state: WorkerState, msg: MetricsMessage): void {
    for (const decl of msg.metrics) this.declareMetric(workerKey, state, decl);
    for (const decl of msg.series) {
      // Bounded: an id past the bound is not stored; its datapoints count as undeclared below.
      if (decl.id < this.maxWorkerSeries) state.bounds[decl.id] = this.bindSeries(workerKey, state, decl);
      else this.pastBound(workerKey, state, decl.id);
    }
    const unknown = recordPoints(state.bounds, msg, workerKey);
    const n = msg.seriesIds.length;
    this.metrics.self.flushed(1, n);
    if (unknown > 0) {
      this.metrics.self.dropped('malformed_message', unknown);
      if (!state.warnedUnknownSeries) {
        state.warnedUnknownSeries = true;
        this.log(
          `metrics: worker ${workerKey} sent ${unknown} datapoints for series it never declared; they were dropped`,
        );
      }
    }
    // The decoder admits known reasons only.
    for (const [reason, count] of Object.entries(msg.dropped)) {
      if (count !== undefined && count > 0) this.metrics.self.dropped(reason as DropReason, count);
    }
    for (const [metric, count] of Object.entries(msg.overflowed)) {
      // Only a model metric has a worker-side overflow; anything else would mint label values at will.
      if (count > 0 && this.metrics.get(metric)?.spec.section === 'model_metrics')
        this.metrics.self.overflowed(metric, count);
    }
  }

  /**
   * Registers a worker's auto-detected metric. The first registration wins; a later one with
   * the same type and dimension names (in any order: series are bound by name) reuses it.
   */
  private declareMetric(workerKey: string, state: WorkerState, decl: MetricDecl): void {
    if (state.detected.has(decl.name)) return;
    // Bounded: past the bound a name is not kept; its series then bind as unknown metrics (counted).
    if (state.detected.size >= MAX_WORKER_DETECTED) return;
    const existing = this.metrics.get(decl.name);
    let metric: FrontendMetric | DropReason;
    if (existing !== null && existing.spec.section === 'model_metrics') {
      metric =
        existing.spec.type === decl.type && sameNameSet(existing.spec.dimensions, decl.dimensions)
          ? existing
          : 'type_mismatch';
      if (metric === 'type_mismatch') {
        this.log(
          `metrics: worker ${workerKey} auto-detected ${decl.name} as a ${decl.type} with dimensions ` +
            `[${decl.dimensions.join(', ')}], but it is a ${existing.spec.type} with [${existing.spec.dimensions.join(', ')}]; ` +
            'its datapoints are dropped (type_mismatch)',
        );
      }
    } else {
      // Validated again here: the worker's checks are not a boundary the frontend can trust.
      const admitted = this.metrics.admit(autoDetectedSpec(decl));
      if ('reason' in admitted) {
        metric = admitted.reason;
        if (admitted.reason === 'forbidden_metric') this.forbidden(workerKey, state, decl.name);
        else this.log(`metrics: worker ${workerKey}: ${admitted.why}; its datapoints are dropped (${admitted.reason})`);
      } else {
        metric = admitted;
      }
    }
    state.detected.set(decl.name, { names: decl.dimensions, metric });
  }

  /** A worker reached for a frontend metric or a self-metric: logged once per worker. */
  private forbidden(workerKey: string, state: WorkerState, metric: string): void {
    if (state.warnedForbidden) return;
    state.warnedForbidden = true;
    this.log(
      `metrics: worker ${workerKey} sent datapoints for ${metric}, which is not a model metric; ` +
        'workers record model metrics only: they are dropped (forbidden_metric); further ones are only counted',
    );
  }

  /** A series each datapoint of which is counted as dropped for `reason`. */
  private dropping(reason: DropReason, metric: string): BoundSeries {
    return new DroppingSeries(() => this.metrics.self.dropped(reason, 1, metric));
  }

  private bindSeries(workerKey: string, state: WorkerState, decl: SeriesDecl): BoundSeries {
    const detected = state.detected.get(decl.metric);
    if (detected !== undefined) {
      if (typeof detected.metric === 'string') return this.dropping(detected.metric, decl.metric);
      if (detected.names.length !== decl.values.length) return this.dropping('bad_dimensions', decl.metric);
      const byName: Record<string, string> = {};
      for (let i = 0; i < detected.names.length; i++) byName[detected.names[i]] = decl.values[i];
      return detected.metric.bind(byName, this.autoLabels.get(workerKey));
    }
    const metric = this.metrics.get(decl.metric);
    if (metric === null) return this.dropping('unknown_metric', decl.metric);
    const front = this.fronts.get(workerKey);
    if (front !== undefined) {
      if (front.has(decl.metric)) return metric.bind(decl.values);
      this.forbidden(workerKey, state, decl.metric);
      return this.dropping('forbidden_metric', decl.metric);
    }
    if (metric.spec.section !== 'model_metrics') {
      this.forbidden(workerKey, state, decl.metric);
      return this.dropping('forbidden_metric', decl.metric);
    }
    // A declared metric: the worker ordered the values by the same config's dimension list.
    return metric.bind(decl.values, this.autoLabels.get(workerKey));
  }
}

/**
 * Records every datapoint of a decoded message into its bound series and returns how many
 * named a series the worker never declared. Within a segment (one request id, one time) a
 * datapoint is an array index and a `record`; `source` (the worker) keeps gauges per process.
 */
function recordPoints(bounds: readonly BoundSeries[], msg: MetricsMessage, source: string): number {
  const sids = msg.seriesIds;
  const values = msg.values;
  let unknown = 0;
  forEachSegment(msg, (from, to, requestId, timeMs) => {
    for (let i = from; i < to; i++) {
      const b = bounds[sids[i]];
      if (b === undefined) unknown++;
      else b.record(values[i], requestId, timeMs, source);
    }
  });
  return unknown;
}

/**
 * The frontend spec of an auto-detected model metric (TorchServe appends Hostname). A histogram
 * gets its unit's preset buckets, as a declared one without `buckets` does (never prom-client's
 * 0.005..10 defaults for a millisecond metric).
 */
export function autoDetectedSpec(decl: MetricDecl): MetricSpec {
  return {
    name: decl.name,
    section: 'model_metrics',
    type: decl.type,
    unit: decl.unit,
    dimensions: decl.dimensions,
    hostLabel: 'Hostname',
    help: '',
    buckets: decl.type === 'histogram' ? (presetBuckets(presetForUnit(decl.unit)) ?? []) : [],
    pos: null,
  };
}
