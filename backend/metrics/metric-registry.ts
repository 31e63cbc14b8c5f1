/**
 * The worker cache's registry: the declared model metrics (live, or silent when hidden), the
 * metrics auto-detected from a handler's first use, and the counted no-op returned for anything
 * else. Lookups never throw into handler code.
 */
import { METRIC_TYPES } from '../../schema/types.js';
import type { MetricsConfig, MetricType } from '../../schema/types.js';
import type { AutoLabels, DropReason } from '../../schema/metrics-api.js';
import { declarationProblems } from '../../schema/config/declaration.js';
import { DEFAULT_LIMITS } from '../../schema/config/normalize.js';
import { sameNameSet } from '../../schema/config/names.js';
import { clip, describeDimensionValues, show } from './dimensions.js';
import { LiveMetric, NoopMetric, ReorderedMetric, SilentMetric } from './worker-metric.js';
import type { MetricOwner, WorkerMetric } from './worker-metric.js';
import { MAX_WARNED } from '../../schema/flush/drop-ledger.js';
import type { DropLedger } from '../../schema/flush/drop-ledger.js';
import type { MetricsFlusher } from '../../schema/flush/flusher.js';
import { mapUnit } from './units.js';

/** The types a metric can have; anything else a handler passes is refused before it is registered. */
const KNOWN_TYPES: ReadonlySet<unknown> = new Set<MetricType>(METRIC_TYPES);

/** Model metrics by name, and how a name that is none resolves. */
export class MetricRegistry {
  /** Declared (live, or silent when hidden) and auto-detected metrics, by name. */
  readonly metrics: ReadonlyMap<string, LiveMetric | SilentMetric>;
  private readonly byName = new Map<string, LiveMetric | SilentMetric>();
  private readonly frontendNames: ReadonlySet<string>;
  private readonly noops = new Map<string, NoopMetric>();
  /** Declared metrics seen in the dimension order a handler gave addMetric, by name and order. */
  private readonly views = new Map<string, ReorderedMetric>();
  private readonly maxAutoDetected: number;
  private detectedCount = 0;

  constructor(
    config: MetricsConfig,
    private readonly owner: MetricOwner,
    private readonly ledger: DropLedger,
    private readonly flusher: MetricsFlusher,
    private readonly autoDetect: boolean,
    private readonly autoLabels: AutoLabels,
  ) {
    this.metrics = this.byName;
    this.maxAutoDetected = config.limits.maxAutoDetectedMetrics ?? DEFAULT_LIMITS.maxAutoDetectedMetrics;
    const frontendNames = new Set<string>();
    for (const spec of config.metrics) {
      if (spec.section !== 'model_metrics') {
        frontendNames.add(spec.name);
        continue;
      }
      // A hidden metric records nothing and counts nothing, decided here once.
      this.byName.set(
        spec.name,
        spec.hidden === true
          ? new SilentMetric(spec.name, spec.type, spec.unit, spec.dimensions)
          : new LiveMetric(owner, spec.name, spec.type, spec.unit, spec.dimensions),
      );
    }
    this.frontendNames = frontendNames;
  }

  /** See WorkerMetricsApi.records. */
  records(name: string): boolean {
    const m = this.metrics.get(name);
    return m === undefined ? this.autoDetect && !this.frontendNames.has(name) : !(m instanceof SilentMetric);
  }

  /** See WorkerMetricsApi.addMetric. */
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

  /** See WorkerMetricsApi.getMetric. */
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
      if (dimensionNames !== undefined && !sameNameSet(known.dimensions, dimensionNames)) {
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

  /**
   * Registers an undeclared metric when auto-detect is on, under the loader's own naming rules
   * and within `limits.maxAutoDetectedMetrics`; its declaration rides the next flush.
   */
  detect(name: string, unit: string, dimensionNames: readonly string[], type: MetricType): WorkerMetric {
    if (typeof name !== 'string' || name === '') {
      return this.noop(name, type, unit, [], 'unknown_metric', '`metric_name` must be a non-empty string');
    }
    const shown = clip(name);
    if (!KNOWN_TYPES.has(type)) {
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
      declarationProblems({ name, type, dimensions: dimensionNames }, true)[0]?.message ??
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
    const metric = new LiveMetric(this.owner, name, type, unit, dims);
    this.byName.set(name, metric);
    this.flusher.declareMetric({ name, type, unit, dimensions: dims });
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

  /** A counted no-op for a metric used with another type than its own. */
  typeMismatch(known: WorkerMetric, type: MetricType): WorkerMetric {
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
      m = new NoopMetric(this.owner, shown, type, unit, dims, reason, detail);
      if (this.noops.size >= MAX_WARNED) return m;
      this.noops.set(key, m);
      // Under the key drop() gives this metric's later drops, so they are not warned about again.
      this.ledger.warnOnce(
        reason,
        shown,
        () => `[METRICS]${detail}; its datapoints are dropped and counted as ${reason}`,
      );
    }
    return m;
  }
}

function describeNames(names: unknown): string {
  return clip(Array.isArray(names) ? names.map(show).join(', ') : names);
}
