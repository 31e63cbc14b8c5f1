/**
 * A front process's metrics: the frontend series it records into (HTTP metrics, Requests2XX…,
 * ts_inference_*) are bound here like the primary's, but a record only adds to a buffer; a
 * flush ships the buffer to the primary (`FrontMetrics`) and swaps in a fresh one. Counters
 * travel as sums, histograms as observations, gauges as their last value: the primary folds
 * them into its long-lived series, so nothing is counted twice and a dead front takes away
 * at most its last unflushed interval.
 */
import type { MetricSpec, SinkMode } from '../../schema/types.js';
import type { AccessRecord, LogLevel } from '../log/log.js';
import type { MetricHandle, MetricsPort, SeriesHandle } from '../models/metrics-port.js';
import type { FrontMetrics, ShippedSeriesDecl } from './messages.js';
import { EMITTED_METRICS } from '../models/frontend-series.js';

/**
 * The families a front records into (the primary sends their specs, those its metrics.yaml
 * declares): the frontend metrics, the refusals a front's route counts itself (the Open
 * Inference Protocol's all-or-none check; a no-op there before, so those 503s went uncounted),
 * and the images a front's decoder refuses.
 */
export const FRONT_METRICS: readonly string[] = Object.freeze([
  ...Object.keys(EMITTED_METRICS),
  'tsserve_requests_refused_total',
  'ts_image_refused_total',
]);

/** Observations one flush holds at most, over every histogram series (more are dropped, and counted by the primary in tsserve_datapoints_dropped_total{reason="queue_full"}). */
export const MAX_OBSERVATIONS_PER_FLUSH = 1_000_000;

/** One bound series of a front: a slot in the current buffer. */
class ShippedSeries implements SeriesHandle {
  sum = 0;
  touched = false;
  observations: number[] = [];
  last = 0;

  constructor(
    readonly id: number,
    readonly type: MetricSpec['type'],
    private readonly owner: ShippedMetrics,
  ) {}

  record(value: number): void {
    if (!Number.isFinite(value)) return; // the primary's record would drop it too
    if (!this.touched) {
      this.touched = true;
      this.owner.dirty.push(this);
    }
    if (this.type === 'counter') this.sum += value;
    else if (this.type === 'gauge') this.last = value;
    else if (this.owner.observationCount < MAX_OBSERVATIONS_PER_FLUSH) {
      this.observations.push(value);
      this.owner.observationCount++;
    } else this.owner.droppedCount++;
  }
}

/** The `MetricsPort` of a front process: binds like the primary's, ships instead of rendering. */
export class ShippedMetrics implements MetricsPort {
  readonly prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';
  readonly modes: readonly SinkMode[];
  /** Series recorded into since the last flush. */
  dirty: ShippedSeries[] = [];
  observationCount = 0;
  droppedCount = 0;
  private readonly specs: Map<string, MetricSpec>;
  private readonly specsByKey: Map<string, MetricSpec>;
  private readonly seriesByKey = new Map<string, ShippedSeries>();
  private pendingDecls: ShippedSeriesDecl[] = [];
  private access: AccessRecord[] = [];
  private logs: [LogLevel, string][] = [];
  private readonly timer: NodeJS.Timeout;

  /** `send` ships one flush; `flushMs` is the interval between flushes. */
  constructor(
    specs: readonly MetricSpec[],
    modes: readonly SinkMode[],
    private readonly send: (m: FrontMetrics) => void,
    flushMs = 100,
  ) {
    this.specs = new Map(specs.map((s) => [s.name, s]));
    this.specsByKey = new Map(specs.flatMap((s): [string, MetricSpec][] => (s.key === undefined ? [] : [[s.key, s]])));
    this.modes = modes;
    this.timer = setInterval(() => this.flush(), flushMs);
    this.timer.unref();
  }

  get(name: string): MetricHandle | null {
    const spec = this.specs.get(name);
    if (spec === undefined) return null;
    return { spec, bind: (dims) => this.bind(spec, dims) };
  }

  byKey(key: string): MetricHandle | null {
    const spec = this.specsByKey.get(key);
    return spec === undefined ? null : this.get(spec.name);
  }

  /** An access record, shipped with the next flush (the primary writes access_log.log). */
  accessRecord(r: AccessRecord): void {
    this.access.push(r);
  }

  /** A log line, shipped with the next flush (the primary writes ts_log.log). */
  logLine(level: LogLevel, msg: string): void {
    this.logs.push([level, msg]);
  }

  /** Ships everything recorded since the last flush (nothing when nothing was). */
  flush(): void {
    if (
      this.dirty.length === 0 &&
      this.pendingDecls.length === 0 &&
      this.access.length === 0 &&
      this.logs.length === 0 &&
      this.droppedCount === 0
    )
      return;
    const counters: number[] = [];
    const gauges: number[] = [];
    const observations: [number, Float64Array][] = [];
    for (const s of this.dirty) {
      s.touched = false;
      if (s.type === 'counter') {
        counters.push(s.id, s.sum);
        s.sum = 0;
      } else if (s.type === 'gauge') gauges.push(s.id, s.last);
      else {
        observations.push([s.id, Float64Array.from(s.observations)]);
        s.observations = [];
      }
    }
    const msg: FrontMetrics = {
      type: 'tsserve.front.metrics',
      decls: this.pendingDecls,
      counters: Float64Array.from(counters),
      observations,
      gauges: Float64Array.from(gauges),
      dropped: this.droppedCount,
      access: this.access,
      logs: this.logs,
    };
    this.dirty = [];
    this.pendingDecls = [];
    this.access = [];
    this.logs = [];
    this.observationCount = 0;
    this.droppedCount = 0;
    this.send(msg);
  }

  prometheusText(): Promise<string> {
    return Promise.resolve(''); // fronts never render: the primary's metrics port does
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    this.flush();
    return Promise.resolve();
  }

  private bind(spec: MetricSpec, dims: Readonly<Record<string, string>> | readonly string[] | undefined): SeriesHandle {
    const byName: Record<string, string> = {};
    if (Array.isArray(dims))
      spec.dimensions.forEach((d, i) => {
        byName[d] = String((dims as readonly string[])[i] ?? '');
      });
    else Object.assign(byName, dims ?? {});
    const key = JSON.stringify([spec.name, spec.dimensions.map((d) => byName[d] ?? null)]);
    let s = this.seriesByKey.get(key);
    if (s === undefined) {
      s = new ShippedSeries(this.seriesByKey.size, spec.type, this);
      this.seriesByKey.set(key, s);
      this.pendingDecls.push({ id: s.id, name: spec.name, dims: byName });
    }
    return s;
  }
}
