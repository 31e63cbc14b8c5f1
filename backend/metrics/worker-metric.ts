/**
 * A model metric as handler code sees it in the worker: resolve dimensions once on `bind`,
 * then `record(value)` is a type check and an append into the shared point buffer.
 */
import type { MetricType } from '../../schema/types.js';
import { OVERFLOW_LABEL_VALUE } from '../../schema/types.js';
import type { BoundSeries, DimensionValues, DropReason } from '../../schema/metrics-api.js';
import { DroppingSeries, MAX_DIMENSION_VALUE_CHARS, NOOP_SERIES } from '../../schema/metrics-api.js';
import type { PointBuffer } from '../../schema/flush/point-buffer.js';
import { describeDimensionValues, orderDimensionValues, show } from './dimensions.js';

/** Longest request id a handler may attach to a datapoint (characters), as long as a dimension value. */
export const MAX_REQUEST_ID_CHARS = MAX_DIMENSION_VALUE_CHARS;

/** Half of a UTF-16 pair without its other half: every sink writes it as U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A value no sink can keep apart or within bounds: too long, or two such values render alike. */
function badLabelValue(v: string): boolean {
  return v.length > MAX_DIMENSION_VALUE_CHARS || LONE_SURROGATE.test(v);
}

/** Why a value is not recorded; a string or bigint is named as such (`String('1')` reads as a number). */
function notFinite(value: unknown): string {
  if (typeof value === 'string') {
    // One warning line, however long the string a handler passed.
    const shown =
      value.length > 64 ? `${JSON.stringify(value.slice(0, 64))}… (${value.length} characters)` : JSON.stringify(value);
    return `value ${shown} is a string, not a number`;
  }
  if (typeof value === 'bigint') return `value ${value}n is a bigint, not a number`;
  return `value ${show(value)} is not a finite number`;
}

/** A model metric in the worker cache. Never throws: bad input is dropped and counted. */
export interface WorkerMetric {
  readonly name: string;
  readonly type: MetricType;
  readonly unit: string;
  readonly dimensions: readonly string[];
  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void;
  /**
   * TorchServe's backwards-compatible `update(value, request_id, dimensions)`: addOrUpdate with
   * the arguments in that order, so a ported handler's call records instead of throwing. Unlike
   * TorchServe it does not rename the metric's dimensions for good: the values are taken as
   * addOrUpdate takes them (a list in the yaml's order, or a {name: value} object).
   */
  update(value: number, requestId?: string, dimensionValues?: DimensionValues): void;
  bind(dimensionValues?: DimensionValues): BoundSeries;
}

/** What a metric needs from the cache that owns it. */
export interface MetricOwner {
  readonly buffer: PointBuffer;
  readonly maxSeriesPerMetric: number;
  /** Allocates a series id and queues its declaration for the next flush. */
  newSeries(metric: string, values: readonly string[]): number;
  /**
   * Counts one dropped datapoint and warns once per (metric, reason). A `detail` that costs work
   * to build is passed as a function, called only when the warning is given.
   */
  drop(reason: DropReason, metric: string, detail: string | (() => string)): void;
  /** Counts one new series folded into `metric`'s overflow series (sent with the next flush). */
  overflowed(metric: string): void;
}

/** The live bound series: checks the value and appends it. */
class LiveSeries implements BoundSeries {
  constructor(
    private readonly owner: MetricOwner,
    private readonly buffer: PointBuffer,
    private readonly metric: string,
    /** The series id the datapoints carry (read by the unbound path with a request id). */
    readonly id: number,
    /** Its dimension values, in declared order (a private copy). */
    readonly values: readonly string[],
    private readonly counter: boolean,
  ) {}

  /** `requestId` overrides the batch's ids for this datapoint; a worker has no `timeMs` (its clock is cached). */
  record(value: number, requestId?: string): void {
    // `v - v !== 0` is true for NaN, ±Infinity; the typeof keeps strings from coercing.
    if (typeof value !== 'number' || value - value !== 0) {
      this.owner.drop('not_finite', this.metric, () => notFinite(value));
      return;
    }
    if (this.counter && value < 0) {
      this.owner.drop('negative_counter', this.metric, 'Counter metric update value cannot be negative');
      return;
    }
    if (requestId === undefined || requestId === null || requestId === '') this.buffer.push(this.id, value);
    else if (typeof requestId === 'string') {
      // Bounded like a dimension value: the id is written into every log line and message of the datapoint.
      if (requestId.length <= MAX_REQUEST_ID_CHARS) this.buffer.pushWithRequest(this.id, value, requestId);
      else
        this.owner.drop(
          'bad_request_id',
          this.metric,
          () => `request id has ${requestId.length} characters; at most ${MAX_REQUEST_ID_CHARS} are kept`,
        );
    }
    // A number is written as TorchServe's Python writes it (String() of a number cannot throw).
    else if (typeof requestId === 'number' || typeof requestId === 'bigint')
      this.buffer.pushWithRequest(this.id, value, String(requestId));
    // Not String(): an object's toString may throw into the handler; the frontend drops these too.
    else this.owner.drop('bad_request_id', this.metric, `request id ${typeof requestId} is not a string`);
  }
}

/** Trie of series by dimension value, one level per dimension; leaves are series. */
type TrieNode = Map<string, TrieNode | LiveSeries>;

/** A declared or auto-detected model metric. */
export class LiveMetric implements WorkerMetric {
  /**
   * Series by value, one Map level per dimension: a hit walks the caller's values without
   * building a key string or copying them (the unbound path runs on every call).
   */
  private readonly trie: TrieNode = new Map();
  private leaf0: LiveSeries | null = null;
  private seriesCount = 0;
  private overflow: LiveSeries | null = null;
  /** One-entry cache of the last series resolved: handlers mostly repeat the same values. */
  private lastValues: readonly string[] = [];
  private lastSeries: LiveSeries | null = null;

  constructor(
    private readonly owner: MetricOwner,
    readonly name: string,
    readonly type: MetricType,
    readonly unit: string,
    readonly dimensions: readonly string[],
  ) {}

  /** Resolves the values to a series (declared to the frontend on first use). */
  bind(dimensionValues?: DimensionValues): BoundSeries {
    const s = this.resolve(dimensionValues);
    if (s === null) {
      const detail = this.badDimensions(dimensionValues);
      return new DroppingSeries(() => this.owner.drop('bad_dimensions', this.name, detail));
    }
    return s;
  }

  /** The unbound path: resolves on every call and honours `requestId`; like `record`, no clock read. */
  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void {
    const s = this.resolve(dimensionValues);
    if (s === null) {
      this.owner.drop('bad_dimensions', this.name, () => this.badDimensions(dimensionValues));
      return;
    }
    s.record(value, requestId);
  }

  update(value: number, requestId?: string, dimensionValues?: DimensionValues): void {
    this.addOrUpdate(value, dimensionValues, requestId);
  }

  /** The series for `given`, or null when the values do not match the declared names or cannot be read. */
  private resolve(given: DimensionValues | undefined): LiveSeries | null {
    try {
      return this.resolveValues(given);
    } catch {
      // A Proxy or a getter that throws while its values are read: never into the handler.
      return null;
    }
  }

  private resolveValues(given: DimensionValues | undefined): LiveSeries | null {
    const hit = this.lookup(given);
    if (hit !== undefined) return hit;
    const values = orderDimensionValues(this.dimensions, given);
    if (values === null || values.some(badLabelValue)) return null;
    const s = this.insert(values);
    // A fold is not cached: each one is counted, as the frontend counts each bind it folds.
    if (s === this.overflow) return s;
    this.lastValues = values;
    this.lastSeries = s;
    return s;
  }

  /** Fast path: an existing series, found without allocating; undefined sends to the slow path. */
  private lookup(given: DimensionValues | undefined): LiveSeries | undefined {
    const names = this.dimensions;
    const d = names.length;
    if (d === 0) return given === undefined || isEmptyValues(given) ? (this.leaf0 ?? undefined) : undefined;
    if (typeof given !== 'object' || given === null) return undefined;
    let node: TrieNode | LiveSeries | undefined = this.trie;
    if (Array.isArray(given)) {
      if (given.length !== d) return undefined;
      const last = this.lastValues;
      let same = this.lastSeries !== null;
      for (let i = 0; same && i < d; i++) same = given[i] === last[i];
      if (same) return this.lastSeries as LiveSeries;
      for (let i = 0; i < d; i++) {
        const v: unknown = given[i];
        if (typeof v !== 'string') return undefined;
        node = (node as TrieNode).get(v);
        if (node === undefined) return undefined;
      }
      this.lastValues = (node as LiveSeries).values;
      this.lastSeries = node as LiveSeries;
      return node as LiveSeries;
    }
    const byName = given as Readonly<Record<string, unknown>>;
    for (let i = 0; i < d; i++) {
      const n = names[i];
      const v = byName[n];
      if (typeof v !== 'string' || !Object.prototype.hasOwnProperty.call(byName, n)) return undefined;
      node = (node as TrieNode).get(v);
      if (node === undefined) return undefined;
    }
    let keys = 0;
    for (const k in byName) if (Object.prototype.hasOwnProperty.call(byName, k)) keys++;
    return keys === d ? (node as LiveSeries) : undefined;
  }

  /** Slow path: a new series (or the overflow one past `maxSeriesPerMetric`). */
  private insert(values: readonly string[]): LiveSeries {
    const d = values.length;
    if (d === 0) {
      if (this.leaf0 === null) this.leaf0 = this.newBound(values);
      return this.leaf0;
    }
    let node = this.trie;
    for (let i = 0; i < d - 1; i++) {
      let next = node.get(values[i]) as TrieNode | undefined;
      if (next === undefined) {
        next = new Map();
        node.set(values[i], next);
      }
      node = next;
    }
    const found = node.get(values[d - 1]) as LiveSeries | undefined;
    if (found !== undefined) return found;
    if (this.seriesCount >= this.owner.maxSeriesPerMetric) {
      this.owner.overflowed(this.name);
      return this.overflowSeries();
    }
    const s = this.newBound(values);
    node.set(values[d - 1], s);
    this.seriesCount++;
    return s;
  }

  private overflowSeries(): LiveSeries {
    if (this.overflow === null) {
      this.overflow = this.newBound(this.dimensions.map(() => OVERFLOW_LABEL_VALUE));
    }
    return this.overflow;
  }

  private newBound(values: readonly string[]): LiveSeries {
    const own = Object.freeze(values.slice());
    const id = this.owner.newSeries(this.name, own);
    return new LiveSeries(this.owner, this.owner.buffer, this.name, id, own, this.type === 'counter');
  }

  private badDimensions(given: unknown): string {
    let values: string[] | null;
    try {
      values = orderDimensionValues(this.dimensions, given as DimensionValues | undefined);
    } catch {
      return `Dimension values could not be read; they should correspond to Dimension names: [${this.dimensions.join(', ')}]`;
    }
    const long = values?.findIndex((v) => v.length > MAX_DIMENSION_VALUE_CHARS) ?? -1;
    if (long >= 0)
      return `Dimension value for ${this.dimensions[long]} has ${values![long]!.length} characters; at most ${MAX_DIMENSION_VALUE_CHARS} are kept as a label`;
    const lone = values?.findIndex((v) => LONE_SURROGATE.test(v)) ?? -1;
    if (lone >= 0)
      return `Dimension value for ${this.dimensions[lone]} holds half of a UTF-16 surrogate pair; every sink would write it as U+FFFD, the same as any other such value`;
    return `Dimension values ${describeDimensionValues(given)} should correspond to Dimension names: [${this.dimensions.join(', ')}]`;
  }
}

/**
 * A declared metric as `addMetric` named its dimensions in another order than the yaml: a list
 * of values follows the handler's order (the yaml's would label them crosswise); values by name
 * and everything else go to the metric unchanged.
 */
export class ReorderedMetric implements WorkerMetric {
  readonly name: string;
  readonly type: MetricType;
  readonly unit: string;
  /** For each declared dimension, its index in the handler's order. */
  private readonly from: readonly number[];

  constructor(
    private readonly base: LiveMetric,
    readonly dimensions: readonly string[],
  ) {
    this.name = base.name;
    this.type = base.type;
    this.unit = base.unit;
    this.from = base.dimensions.map((d) => dimensions.indexOf(d));
  }

  addOrUpdate(value: number, dimensionValues?: DimensionValues, requestId?: string): void {
    this.base.addOrUpdate(value, this.reorder(dimensionValues), requestId);
  }

  update(value: number, requestId?: string, dimensionValues?: DimensionValues): void {
    this.addOrUpdate(value, dimensionValues, requestId);
  }

  bind(dimensionValues?: DimensionValues): BoundSeries {
    return this.base.bind(this.reorder(dimensionValues));
  }

  private reorder(given: DimensionValues | undefined): DimensionValues | undefined {
    if (!Array.isArray(given) || given.length !== this.from.length) return given;
    const list = given as readonly unknown[];
    return this.from.map((j) => list[j]) as DimensionValues;
  }
}

/** Stand-in returned for an unknown or mismatching metric: every datapoint is a counted drop. */
export class NoopMetric implements WorkerMetric {
  private readonly bound: DroppingSeries;

  constructor(
    private readonly owner: MetricOwner,
    readonly name: string,
    readonly type: MetricType,
    readonly unit: string,
    readonly dimensions: readonly string[],
    private readonly reason: DropReason,
    private readonly detail: string,
  ) {
    this.bound = new DroppingSeries(() => owner.drop(reason, name, detail));
  }

  addOrUpdate(): void {
    this.owner.drop(this.reason, this.name, this.detail);
  }

  update(): void {
    this.addOrUpdate();
  }

  bind(): BoundSeries {
    return this.bound;
  }
}

/** `[]` or `{}` (no own keys): the values of a metric without dimensions, without allocating. */
function isEmptyValues(given: unknown): boolean {
  if (Array.isArray(given)) return given.length === 0;
  if (typeof given !== 'object' || given === null) return false;
  for (const k in given) if (Object.prototype.hasOwnProperty.call(given, k)) return false;
  return true;
}

/**
 * A metric that records nothing and counts nothing: a hidden metric (deprecated past its grace,
 * or `hidden: true`), or every metric when metrics are off. Chosen once, when it is looked up.
 */
export class SilentMetric implements WorkerMetric {
  constructor(
    readonly name: string,
    readonly type: MetricType,
    readonly unit: string,
    readonly dimensions: readonly string[],
  ) {}

  addOrUpdate(): void {}

  update(): void {}

  bind(): BoundSeries {
    return NOOP_SERIES;
  }
}
