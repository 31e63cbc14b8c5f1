/**
 * A front process's metrics: the frontend series it records into (HTTP metrics, Requests2XX…,
 * ts_inference_*) are bound here like the primary's, and a record is a push into the same
 * `PointBuffer` a worker's cache uses; a flush is the same `MetricsMessage`, with the same caps
 * and drop ledger (schema/flush/), that the primary folds in with the same `MetricsIngest`. The
 * message rides in a `FrontMetrics` envelope with the access records and log lines the primary
 * writes (one writer per file).
 */
import type { MetricSpec, SinkMode } from '../../schema/types.js';
import type { MetricsMessage } from '../../schema/ipc.js';
import { DroppingSeries } from '../../schema/metrics-api.js';
import { DEFAULT_LIMITS } from '../../schema/config/normalize.js';
import { DropLedger } from '../../schema/flush/drop-ledger.js';
import { MetricsFlusher } from '../../schema/flush/flusher.js';
import type { PointBuffer } from '../../schema/flush/point-buffer.js';
import type { AccessRecord, LogLevel } from '../log/log.js';
import type { BoundSeries } from '../../schema/metrics-api.js';
import type { MetricHandle, MetricsPort } from '../models/metrics-port.js';
import type { FrontMetrics } from './messages.js';
import { EMITTED_METRICS } from '../models/frontend-series.js';

/**
 * The families a front records into (the primary sends their specs, those its metrics.yaml
 * declares): the frontend metrics, the refusals a front's route counts itself (the Open
 * Inference Protocol's all-or-none check); the frontend metrics include the images a front's
 * decoder refuses (ts_image_refused_total).
 */
export const FRONT_METRICS: readonly string[] = Object.freeze([
  ...Object.keys(EMITTED_METRICS),
  'tsserve_requests_refused_total',
]);

/** One bound series of a front: its id in the flushes, and a push into the buffer. */
class FrontSeries implements BoundSeries {
  constructor(
    private readonly buffer: PointBuffer,
    private readonly id: number,
  ) {}

  /** The primary stamps the time and checks the value, as it does a worker's datapoint. */
  record(value: number): void {
    this.buffer.push(this.id, value);
  }
}

/** Where a front's flushes go: `process.send`, whose `false` means its backlog is full. */
export type FrontSend = (m: FrontMetrics, done: () => void) => boolean | void;

/** The `MetricsPort` of a front process: binds like the primary's, ships instead of rendering. */
export class FrontMetricsPort implements MetricsPort {
  readonly prometheusContentType = 'text/plain; version=0.0.4; charset=utf-8';
  readonly modes: readonly SinkMode[];
  private readonly specs: Map<string, MetricSpec>;
  private readonly specsByKey: Map<string, MetricSpec>;
  private readonly seriesByKey = new Map<string, FrontSeries>();
  private readonly ledger: DropLedger;
  private readonly flusher: MetricsFlusher;
  private access: AccessRecord[] = [];
  private logs: [LogLevel, string][] = [];
  private readonly timer: NodeJS.Timeout;

  /** `send` ships one flush; `flushMs` is the interval between flushes. */
  constructor(
    specs: readonly MetricSpec[],
    modes: readonly SinkMode[],
    private readonly send: FrontSend,
    opts: { readonly flushMs?: number; readonly maxPointsPerFlush?: number; readonly nowMs?: () => number } = {},
  ) {
    this.specs = new Map(specs.map((s) => [s.name, s]));
    this.specsByKey = new Map(specs.flatMap((s): [string, MetricSpec][] => (s.key === undefined ? [] : [[s.key, s]])));
    this.modes = modes;
    // A front's own troubles are logged through the primary, like its other lines.
    const log = (line: string): void => void this.logs.push(['warn', line]);
    this.flusher = new MetricsFlusher(
      opts.maxPointsPerFlush ?? DEFAULT_LIMITS.maxPointsPerFlush,
      opts.nowMs ?? Date.now,
      (m, done) => this.ship(m, done),
      (this.ledger = new DropLedger(log)),
      log,
    );
    this.timer = setInterval(() => this.flush(), opts.flushMs ?? 100);
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

  /**
   * Ships everything recorded since the last flush (nothing when nothing was); `force` ships
   * even while the channel is congested (the front is going away).
   */
  flush(force = false): void {
    // The flusher calls `ship` when it has metrics to send; records and lines go with them or alone.
    if (this.flusher.flush(force) === 0 && (this.access.length > 0 || this.logs.length > 0)) this.ship(null, () => {});
  }

  prometheusText(): Promise<string> {
    return Promise.resolve(''); // fronts never render: the primary's metrics port does
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    this.flush(true);
    return Promise.resolve();
  }

  private ship(metrics: MetricsMessage | null, done: () => void): boolean | void {
    const msg: FrontMetrics = { type: 'tsserve.front.metrics', metrics, access: this.access, logs: this.logs };
    this.access = [];
    this.logs = [];
    return this.send(msg, done);
  }

  private bind(spec: MetricSpec, dims: Readonly<Record<string, string>> | readonly string[] | undefined): BoundSeries {
    const byName: Record<string, string> = {};
    if (Array.isArray(dims))
      spec.dimensions.forEach((d, i) => {
        byName[d] = String((dims as readonly string[])[i] ?? '');
      });
    else Object.assign(byName, dims ?? {});
    // The primary would refuse a missing or an extra name: counted here, as it would count them.
    const names = Object.keys(byName);
    if (names.length !== spec.dimensions.length || spec.dimensions.some((d) => typeof byName[d] !== 'string'))
      return new DroppingSeries(() =>
        this.ledger.drop('bad_dimensions', spec.name, () => `dimensions should be [${spec.dimensions.join(', ')}]`),
      );
    const values = spec.dimensions.map((d) => byName[d] as string);
    const key = JSON.stringify([spec.name, values]);
    let s = this.seriesByKey.get(key);
    if (s === undefined) {
      s = new FrontSeries(this.flusher.buffer, this.flusher.newSeries(spec.name, values));
      this.seriesByKey.set(key, s);
    }
    return s;
  }
}
