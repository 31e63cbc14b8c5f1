/**
 * The tracing adapter — the only file that imports OpenTelemetry's trace SDK, its OTLP/HTTP
 * (protobuf) trace exporter and the W3C trace-context propagator. A `Tracer` is built only when
 * tracing is on (trace-settings.ts); spans are started and ended with explicit times (epoch ms),
 * so a request's child spans are made in the frontend from timestamps it already has. Finished
 * spans wait in a BatchSpanProcessor's bounded queue; each dropped at its bound and each in a
 * failed export is counted (`onDropped`), and `close()` flushes once within its bound.
 */
import {
  createNoopMeter,
  defaultTextMapGetter,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { Attributes, Context, Counter, Meter, MeterProvider, Span } from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core';
import type { ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-base';
import type { BufferConfig, ReadableSpan, Sampler, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { IncomingHttpHeaders } from 'http';
import type { TracingSettings } from './trace-settings.js';

/** Attribute values a span takes. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean | readonly string[]>>;

/** Why spans were lost: the processor's queue was full, or their export failed. */
export type SpanDropReason = 'queue_full' | 'export_failed';

/** One span, started; `end` once (later calls do nothing). */
export interface SpanHandle {
  readonly traceId: string;
  /** False when the sampler dropped it: then nothing set on it or its children is kept. */
  readonly recording: boolean;
  set(attributes: SpanAttributes): void;
  /** Error status (with `message`); a span is otherwise left unset, as OpenTelemetry advises. */
  error(message: string): void;
  /** A child span (kind internal) starting at `startMs` (epoch ms). */
  child(name: string, startMs: number, attributes?: SpanAttributes): SpanHandle;
  end(endMs: number): void;
}

/** What the tracer is told to report. */
export interface TracerHooks {
  readonly log: (level: 'warn' | 'error', msg: string) => void;
  /** Called with each loss of `n` spans. */
  readonly onDropped?: (reason: SpanDropReason, n: number) => void;
  /** Upper bound on `close()` in ms (default DEFAULT_CLOSE_TIMEOUT_MS, 5000). */
  readonly closeTimeoutMs?: number;
}

const propagator = new W3CTraceContextPropagator();

/** The W3C trace context of `headers` (traceparent, tracestate) as OpenTelemetry's propagator reads it. */
function incoming(headers: IncomingHttpHeaders): Context {
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

/**
 * A context of one slot, for reading what the propagator extracts: ROOT_CONTEXT's `setValue`
 * copies its whole map into a new context, a cost each request paid with tracing off (the
 * exemplars' trace id is all that is read then, and the span is the only value extract sets).
 */
class OneSlot implements Context {
  constructor(private readonly value: unknown = undefined) {}
  getValue(): unknown {
    return this.value;
  }
  setValue(_key: symbol, value: unknown): Context {
    return new OneSlot(value);
  }
  deleteValue(): Context {
    return EMPTY_SLOT;
  }
}
const EMPTY_SLOT = new OneSlot();

/** The trace id of a valid incoming `traceparent` (OpenTelemetry's W3C propagator), else undefined. */
export function incomingTraceId(headers: IncomingHttpHeaders): string | undefined {
  if (headers.traceparent === undefined) return undefined;
  return trace.getSpanContext(propagator.extract(EMPTY_SLOT, headers, defaultTextMapGetter))?.traceId;
}

function samplerOf(s: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(s.ratio);
  switch (s.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}

/** A meter whose only live instrument is the processor's span counter, reporting queue-full drops. */
function dropMeter(onDropped: (n: number) => void): MeterProvider {
  const base = createNoopMeter();
  const meter = Object.create(base) as Meter;
  const counter: Counter = {
    add: (n, attrs) => {
      if (attrs?.['error.type'] === 'queue_full') onDropped(n);
    },
  };
  meter.createCounter = () => counter;
  return { getMeter: () => meter };
}

class Handle implements SpanHandle {
  private ended = false;
  /** The context its children start under, made on the first child. */
  private asParent: Context | null = null;
  constructor(
    private readonly span: Span,
    private readonly tracer: Tracer,
  ) {}

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  get recording(): boolean {
    return this.span.isRecording();
  }

  set(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes as Attributes);
  }

  error(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  child(name: string, startMs: number, attributes?: SpanAttributes): SpanHandle {
    this.asParent ??= trace.setSpan(ROOT_CONTEXT, this.span);
    return this.tracer.start(name, SpanKind.INTERNAL, startMs, attributes, this.asParent);
  }

  end(endMs: number): void {
    if (this.ended) return;
    this.ended = true;
    this.span.end(endMs);
  }
}

/** `close()`'s bound when the hooks give none (ms). */
const DEFAULT_CLOSE_TIMEOUT_MS = 5000;

/** Share of the close bound the flush's exports may take, retries included (the rest is the shutdown's). */
const CLOSE_EXPORT_SHARE = 0.8;

/** A running tracer provider exporting over OTLP/HTTP. */
export class Tracer {
  private readonly provider: BasicTracerProvider;
  private readonly tracer;
  private lastWarnMs = -Infinity;
  private closing: Promise<void> | null = null;
  /** The exporter of the exports `close()` makes (null before it): its timeout is within the close bound. */
  private closeExporter: OTLPTraceExporter | null = null;

  constructor(
    readonly settings: TracingSettings,
    private readonly hooks: TracerHooks,
  ) {
    const exporter = this.exporterWithin(settings.exportTimeoutMs);
    // The processor's own meter is how the SDK tells of a span dropped at a full queue (the
    // sdk-trace-base shim passes the option through to the processor it extends).
    const config: BufferConfig & { readonly selfObsMeterProvider: MeterProvider } = {
      maxQueueSize: settings.maxQueueSize,
      maxExportBatchSize: settings.maxExportBatchSize,
      scheduledDelayMillis: settings.scheduledDelayMs,
      exportTimeoutMillis: settings.exportTimeoutMs,
      selfObsMeterProvider: dropMeter((n) =>
        this.lost('queue_full', n, `the queue of ${settings.maxQueueSize} was full`),
      ),
    };
    const processor = new BatchSpanProcessor(this.counting(exporter), config);
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ ...settings.resource }),
      sampler: samplerOf(settings),
      spanProcessors: [processor],
    });
    this.tracer = this.provider.getTracer('tsserve');
  }

  /**
   * An OTLP exporter whose every export, its retries included, ends within `timeoutMs`: the SDK's
   * retrying transport retries a 429/502/503/504 with backoff only while its deadline (this
   * timeout from the export's start) leaves room.
   */
  private exporterWithin(timeoutMs: number): OTLPTraceExporter {
    return new OTLPTraceExporter({
      url: this.settings.endpoint,
      headers: { ...this.settings.headers },
      timeoutMillis: timeoutMs,
    });
  }

  /**
   * The exporter, with each failed export's spans counted and warned about (at most once a
   * minute). From `close()` on, exports go to `closeExporter` instead, whose retries stop
   * within the close bound.
   */
  private counting(inner: SpanExporter): SpanExporter {
    return {
      export: (spans: ReadableSpan[], done: (r: ExportResult) => void) =>
        (this.closeExporter ?? inner).export(spans, (r) => {
          if (r.code !== ExportResultCode.SUCCESS)
            this.lost(
              'export_failed',
              spans.length,
              `export to ${this.settings.endpoint} failed: ${(r.error?.message ?? 'unknown error').slice(0, 200)}`,
            );
          done(r);
        }),
      shutdown: () => Promise.all([inner.shutdown(), this.closeExporter?.shutdown()]).then(() => undefined),
      forceFlush: () => inner.forceFlush?.() ?? Promise.resolve(),
    };
  }

  /** `n` spans lost: counted, and warned about at most once a minute. */
  private lost(reason: SpanDropReason, n: number, why: string): void {
    this.hooks.onDropped?.(reason, n);
    const now = Date.now();
    if (now - this.lastWarnMs < 60_000) return;
    this.lastWarnMs = now;
    this.hooks.log(
      'warn',
      `tracing: ${n} span(s) lost (${why})${this.hooks.onDropped ? '; counted in tsserve_spans_dropped_total' : ''}`,
    );
  }

  /** A span of `kind` starting at `startMs` (epoch ms) under `parent`. */
  start(
    name: string,
    kind: SpanKind,
    startMs: number,
    attributes: SpanAttributes | undefined,
    parent: Context,
  ): Handle {
    const span = this.tracer.startSpan(
      name,
      { kind, startTime: startMs, ...(attributes !== undefined ? { attributes: attributes as Attributes } : {}) },
      parent,
    );
    return new Handle(span, this);
  }

  /** The SERVER span of one request, continuing the W3C trace context its headers carry. */
  server(name: string, headers: IncomingHttpHeaders, startMs: number, attributes: SpanAttributes): SpanHandle {
    const parent = headers.traceparent === undefined ? ROOT_CONTEXT : incoming(headers);
    return this.start(name, SpanKind.SERVER, startMs, attributes, parent);
  }

  /**
   * Exports what is queued, then stops; bounded, and never rejects. The flush's exports go
   * through an exporter whose timeout is CLOSE_EXPORT_SHARE of the bound, so a collector that
   * answers 503 is retried only while that leaves room, and no retry outlives the close; the rest
   * of the bound is the provider's shutdown. Waiting stops at the bound whatever happens (an
   * export already retrying when close began keeps its own deadline), with a warning.
   */
  close(): Promise<void> {
    if (this.closing !== null) return this.closing;
    const bound = this.hooks.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    this.closeExporter = this.exporterWithin(Math.max(1, Math.floor(bound * CLOSE_EXPORT_SHARE)));
    let done = false;
    const work = this.provider
      .forceFlush()
      .then(() => this.provider.shutdown())
      .catch((err: unknown) => this.hooks.log('warn', `tracing: close: ${String(err).slice(0, 200)}`));
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        if (!done) this.hooks.log('warn', `tracing: close: not done within its bound of ${bound} ms; stopped waiting`);
        resolve();
      }, bound);
      timer.unref();
    });
    void work.then(() => (done = true));
    this.closing = Promise.race([work, limit]).finally(() => clearTimeout(timer));
    return this.closing;
  }
}
