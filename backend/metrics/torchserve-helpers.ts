/**
 * TorchServe's four helpers (`add_counter`, `add_time`, `add_size`, `add_percent`): a metric
 * looked up or auto-detected by name with ModelName and Level filled in, the call's unit
 * converted to the metric's, and `idx` read as the request's index in the batch.
 */
import type { MetricType } from '../../schema/types.js';
import { show } from './dimensions.js';
import { NoopMetric, SilentMetric } from './worker-metric.js';
import type { WorkerMetric } from './worker-metric.js';
import type { DropLedger } from '../../schema/flush/drop-ledger.js';
import type { MetricRegistry } from './metric-registry.js';
import type { PointBuffer } from '../../schema/flush/point-buffer.js';
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

/** Default dimensions the helpers fill in when the metric declares them (TorchServe). */
const MODEL_NAME_DIM = 'ModelName';
const LEVEL_DIM = 'Level';
const LEVEL_MODEL = 'Model';

/** The helpers of one worker cache. Nothing here throws into handler code. */
export class TorchServeHelpers {
  /** The batch being handled, for the helpers' numeric request ids (TorchServe's `idx`). */
  private batchIds: readonly string[] = [];

  constructor(
    private readonly registry: MetricRegistry,
    private readonly ledger: DropLedger,
    private readonly buffer: PointBuffer,
    private readonly modelName: string,
  ) {}

  /** The batch being handled: an `idx` indexes it, and bound records carry its ids joined by `,`. */
  setRequestIds(ids: readonly string[]): void {
    this.batchIds = Array.isArray(ids) ? ids.filter((x) => typeof x === 'string') : [];
    this.buffer.setBatch(this.batchIds);
  }

  /** See WorkerMetricsApi.addCounter. */
  addCounter(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
  ): void {
    this.helper('addCounter', name, 'count', 'counter', true, value, requestId, dimensions);
  }

  /** See WorkerMetricsApi.addTime. */
  addTime(
    name: string,
    value: number,
    requestId?: string | number,
    unit: TimeUnit = 'ms',
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    if (!isTimeUnit(unit)) {
      this.ledger.drop('bad_unit', name, BAD_TIME_UNIT_MESSAGE);
      return;
    }
    this.helper('addTime', name, unit, type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /** See WorkerMetricsApi.addSize. */
  addSize(
    name: string,
    value: number,
    requestId?: string | number,
    unit: SizeUnit = 'MB',
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    if (!isSizeUnit(unit)) {
      this.ledger.drop('bad_unit', name, BAD_SIZE_UNIT_MESSAGE);
      return;
    }
    this.helper('addSize', name, unit, type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /** See WorkerMetricsApi.addPercent. */
  addPercent(
    name: string,
    value: number,
    requestId?: string | number,
    dimensions?: Readonly<Record<string, string>>,
    type?: MetricType,
  ): void {
    this.helper('addPercent', name, 'percent', type ?? 'gauge', type !== undefined, value, requestId, dimensions);
  }

  /** Shared body of the four helpers. */
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
    let metric: WorkerMetric | undefined = this.registry.metrics.get(name);
    if (metric instanceof SilentMetric) return;
    if (
      dimensions !== undefined &&
      dimensions !== null &&
      (typeof dimensions !== 'object' || Array.isArray(dimensions))
    ) {
      // Read by its keys, a list would name labels "0", "1"… (and a string its characters).
      this.ledger.drop(
        'bad_dimensions',
        name,
        `dimensions must be an object of name: value (e.g. {MethodName: 'preprocess'}; ` +
          `TorchServe's [Dimension(name, value)]), not ${Array.isArray(dimensions) ? 'a list' : `a ${typeof dimensions}`}`,
      );
      return;
    }
    if (metric !== undefined) {
      // An omitted type means "as declared" (addCounter always means counter).
      if (typeIsExplicit && metric.type !== type) metric = this.registry.typeMismatch(metric, type);
    } else {
      let names: string[];
      try {
        names = Object.keys(dimensions ?? {});
      } catch (e) {
        this.ledger.drop('bad_dimensions', name, `Dimension values could not be read: ${show(e)}`);
        return;
      }
      if (!names.includes(MODEL_NAME_DIM)) names.push(MODEL_NAME_DIM);
      if (!names.includes(LEVEL_DIM)) names.push(LEVEL_DIM);
      metric = this.registry.detect(name, mapUnit(unit), names, type);
    }
    let values: Record<string, string>;
    try {
      values = this.withDefaults(metric.dimensions, dimensions);
    } catch (e) {
      // A dimensions object whose keys or values throw when read (a Proxy, a getter): never into the handler.
      this.ledger.drop('bad_dimensions', metric.name, `Dimension values could not be read: ${show(e)}`);
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
    this.ledger.drop(
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
}
