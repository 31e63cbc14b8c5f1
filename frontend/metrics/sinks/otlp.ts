/**
 * The `otlp` sink — the only file that imports OpenTelemetry's metrics SDK and its OTLP/HTTP
 * (protobuf) exporter. Every declared family is held in the exposition's own families
 * (otlp-cells.ts), so OTLP carries the values `/metrics` shows; the SDK's periodic reader pulls
 * them through a MetricProducer at each interval and its exporter posts them. Export failures
 * are counted (`onExportError`) and warned about at most once a minute; a failing collector
 * never blocks the other sinks, and `close()` flushes once within its bound.
 */
import type { HrTime } from '@opentelemetry/api';
import { ValueType } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AggregationTemporality,
  DataPointType,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import type {
  CollectionResult,
  MetricData,
  MetricProducer,
  PushMetricExporter,
  ResourceMetrics,
} from '@opentelemetry/sdk-metrics';
import type { MetricSpec } from '../../../schema/types.js';
import type { GaugeCell } from '../exposition/cell.js';
import type { MetricsLog, Sink, SinkMetric } from './sink.js';
import { OtlpFamily } from '../otlp/otlp-cells.js';
import type { OtlpHistogramValue, OtlpMetric, OtlpTemporality } from '../otlp/otlp-cells.js';

/** Settings of the otlp sink. */
export interface OtlpSinkOptions {
  readonly log: MetricsLog;
  /** The collector's metrics URL (`http://host:4318/v1/metrics`). */
  readonly endpoint: string;
  /** Export period in ms (OTEL_METRIC_EXPORT_INTERVAL; OpenTelemetry's default is 60000). */
  readonly intervalMs: number;
  /** Bound on one export in ms (OTEL_METRIC_EXPORT_TIMEOUT; default 30000). */
  readonly timeoutMs?: number;
  readonly temporality: OtlpTemporality;
  /** Extra request headers (OTEL_EXPORTER_OTLP_METRICS_HEADERS). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Resource attributes (`service.name` and the like). */
  readonly resource: Readonly<Record<string, string>>;
  /** Called once per failed export. */
  readonly onExportError?: () => void;
  /** Upper bound on `close()` in ms (default 5000). */
  readonly closeTimeoutMs?: number;
  /** Epoch-ms clock (default Date.now). */
  readonly nowMs?: () => number;
}

/** Least time between two export-failure warnings (ms). */
const REWARN_MS = 60_000;

const hrTime = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** OTLP data of one collected metric. */
function metricData(m: OtlpMetric, temporality: AggregationTemporality, nowMs: number): MetricData {
  const descriptor = { name: m.name, description: m.description, unit: m.unit, valueType: ValueType.DOUBLE };
  const end = hrTime(nowMs);
  if (m.kind === 'histogram') {
    return {
      descriptor,
      aggregationTemporality: temporality,
      dataPointType: DataPointType.HISTOGRAM,
      dataPoints: m.points.map((p) => {
        const h = p.value as OtlpHistogramValue;
        return {
          startTime: hrTime(p.startMs),
          endTime: end,
          attributes: p.attributes,
          value: { buckets: { boundaries: [...h.boundaries], counts: [...h.counts] }, sum: h.sum, count: h.count },
        };
      }),
    };
  }
  const dataPoints = m.points.map((p) => ({
    startTime: hrTime(p.startMs),
    endTime: end,
    attributes: p.attributes,
    value: p.value as number,
  }));
  return m.kind === 'sum'
    ? {
        descriptor,
        aggregationTemporality: temporality,
        dataPointType: DataPointType.SUM,
        dataPoints,
        isMonotonic: true,
      }
    : { descriptor, aggregationTemporality: temporality, dataPointType: DataPointType.GAUGE, dataPoints };
}

/** Exports the declared families over OTLP/HTTP. */
export class OtlpSink implements Sink {
  readonly mode = 'otlp' as const;
  private readonly families: OtlpFamily[] = [];
  private readonly liveCells = new Map<string, Set<GaugeCell>>();
  private readonly provider: MeterProvider;
  private readonly nowMs: () => number;
  private lastWarnMs = -Infinity;
  private closing: Promise<void> | null = null;

  constructor(private readonly opts: OtlpSinkOptions) {
    this.nowMs = opts.nowMs ?? Date.now;
    const inner = new OTLPMetricExporter({
      url: opts.endpoint,
      headers: { ...(opts.headers ?? {}) },
      timeoutMillis: opts.timeoutMs ?? 30_000,
    });
    const producer: MetricProducer = { collect: () => Promise.resolve(this.collectResult()) };
    const reader = new PeriodicExportingMetricReader({
      exporter: this.counting(inner),
      exportIntervalMillis: opts.intervalMs,
      exportTimeoutMillis: Math.min(opts.timeoutMs ?? 30_000, opts.intervalMs),
      metricProducers: [producer],
    });
    this.provider = new MeterProvider({ resource: resourceFromAttributes({ ...opts.resource }), readers: [reader] });
  }

  /** The exporter, with each failed export counted and warned about (at most once a minute). */
  private counting(inner: PushMetricExporter): PushMetricExporter {
    return {
      export: (metrics: ResourceMetrics, done: (r: ExportResult) => void) =>
        inner.export(metrics, (r) => {
          if (r.code !== ExportResultCode.SUCCESS) this.exportFailed(r.error);
          done(r);
        }),
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
      ...(inner.selectAggregationTemporality !== undefined
        ? { selectAggregationTemporality: inner.selectAggregationTemporality.bind(inner) }
        : {}),
    };
  }

  private exportFailed(error: Error | undefined): void {
    this.opts.onExportError?.();
    const now = this.nowMs();
    if (now - this.lastWarnMs < REWARN_MS) return;
    this.lastWarnMs = now;
    const why = (error?.message ?? 'unknown error').slice(0, 200);
    this.opts.log(
      'warn',
      `otlp: export to ${this.opts.endpoint} failed (${why}); counted in tsserve_sink_errors_total`,
    );
  }

  metric(spec: MetricSpec): SinkMetric {
    const f = new OtlpFamily(
      spec,
      (source, cell) => {
        let set = this.liveCells.get(source);
        if (set === undefined) this.liveCells.set(source, (set = new Set()));
        set.add(cell);
      },
      this.nowMs,
    );
    this.families.push(f);
    return f;
  }

  /** A process (worker) exited: its gauge values go or retire, as in the exposition. */
  processGone(source: string): void {
    const cells = this.liveCells.get(source);
    if (cells === undefined) return;
    this.liveCells.delete(source);
    for (const c of cells) c.forget(source);
  }

  /** Every family's points now (what one export carries), as plain data. */
  collect(): OtlpMetric[] {
    const now = this.nowMs();
    return this.families.map((f) => f.collect(this.opts.temporality, now)).filter((m) => m.points.length > 0);
  }

  private collectResult(): CollectionResult {
    const now = this.nowMs();
    const temporality =
      this.opts.temporality === 'delta' ? AggregationTemporality.DELTA : AggregationTemporality.CUMULATIVE;
    const metrics = this.collect().map((m) => metricData(m, temporality, now));
    return {
      // The reader keeps the provider's resource and takes the scopes from here.
      resourceMetrics: {
        resource: resourceFromAttributes({}),
        scopeMetrics: [{ scope: { name: 'tsserve', version: '' }, metrics }],
      },
      errors: [],
    };
  }

  close(): Promise<void> {
    if (this.closing !== null) return this.closing;
    const bound = this.opts.closeTimeoutMs ?? 5000;
    // One last export (forceFlush collects), then shutdown; bounded, and never rejects.
    const work = this.provider
      .forceFlush({ timeoutMillis: bound })
      .then(() => this.provider.shutdown({ timeoutMillis: bound }))
      .catch((err: unknown) => this.opts.log('warn', `otlp: close: ${String(err).slice(0, 200)}`));
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, bound * 2);
      timer.unref();
    });
    this.closing = Promise.race([work, limit]).finally(() => clearTimeout(timer));
    return this.closing;
  }
}
