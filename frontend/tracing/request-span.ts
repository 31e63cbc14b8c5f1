/**
 * One request's spans: the SERVER span a door starts (`startRequestSpan`, ended when the
 * response closes, with `http.response.status_code` and error status at 4xx/5xx) and the child
 * spans made afterwards from timestamps the frontend already has — a batched job's queue, batch
 * and handler time (its outcome), a generation's queue, prefill and decode (its RequestTimings).
 * No IPC message is added per request. With tracing off (`tracingOn()` false) nothing is built:
 * the doors test `tracingOn()` before calling `startRequestSpan` (so no attribute literal is made),
 * `requestSpanOf` answers undefined without a lookup, and the doors only read the incoming trace
 * id for exemplars.
 */
import type { IncomingMessage, ServerResponse } from 'http';
import { performance } from 'perf_hooks';
import { incomingTraceId } from './otel-tracing.js';
import type { SpanAttributes, SpanHandle, Tracer } from './otel-tracing.js';

let active: Tracer | null = null;

/** The process's tracer while tracing is on (createServer sets it; null when off). */
export function activeTracer(): Tracer | null {
  return active;
}

/**
 * True while tracing is on. The doors branch on it before anything per request (the span's
 * attribute literal, the clock read, the span table's lookup), so tracing off costs one test.
 */
export function tracingOn(): boolean {
  return active !== null;
}

/** Makes `t` the process's tracer (null: off); returns what undoes it, if it is still the one. */
export function setActiveTracer(t: Tracer | null): () => void {
  active = t;
  return () => {
    if (active === t) active = null;
  };
}

/** Epoch ms of a `performance.now()` reading (spans take epoch times). */
const epochMs = (perfMs: number): number => performance.timeOrigin + perfMs;

/** Seconds, as vLLM's span attributes give durations. */
const sec = (ms: number): number => Math.max(0, ms) / 1000;

/** A generation's phases (frontend/generation/engine-stats.ts RequestTimings), ms. */
export interface PhaseTimings {
  readonly queueMs: number;
  readonly prefillMs: number;
  readonly decodeMs: number;
  readonly totalMs: number;
}

/** The spans of one request. */
export class RequestSpan {
  constructor(private readonly root: SpanHandle) {}

  /** The trace id the request's exemplars carry. */
  get traceId(): string {
    return this.root.traceId;
  }

  /** False when the sampler dropped the trace: callers may skip building attributes. */
  get recording(): boolean {
    return this.root.recording;
  }

  /** Adds attributes to the SERVER span. */
  set(attributes: SpanAttributes): void {
    if (this.root.recording) this.root.set(attributes);
  }

  /**
   * A batched job's children: `queue` (admission → sent to a worker), `batch` (sent → result)
   * and under it `handler` (the worker's reported handler time, from the batch's start; the
   * frontend has no finer stamp of when the handler began). Times: `performance.now()` ms, µs.
   */
  batched(arrivalMs: number, queueUs: number, handlerUs: number | undefined, doneMs: number): void {
    if (!this.root.recording) return;
    const sentMs = Math.min(arrivalMs + queueUs / 1000, doneMs);
    this.root.child('queue', epochMs(arrivalMs)).end(epochMs(sentMs));
    const batch = this.root.child('batch', epochMs(sentMs));
    if (handlerUs !== undefined)
      batch.child('handler', epochMs(sentMs)).end(epochMs(Math.min(sentMs + handlerUs / 1000, doneMs)));
    batch.end(epochMs(doneMs));
    this.root.set({
      'gen_ai.latency.time_in_queue': sec(queueUs / 1000),
      ...(handlerUs !== undefined ? { 'tsserve.handler_time': sec(handlerUs / 1000) } : {}),
    });
  }

  /**
   * One engine request's children: `queue` (arrival → first scheduled), `engine` (first
   * scheduled → last token) and under it `prefill` and `decode`; the server span gets vLLM's
   * latency attributes (seconds). Several prompts of one request each add their own.
   */
  generated(arrivalMs: number, t: PhaseTimings): void {
    if (!this.root.recording) return;
    const scheduled = arrivalMs + t.queueMs;
    const first = scheduled + t.prefillMs;
    const last = first + t.decodeMs;
    this.root.child('queue', epochMs(arrivalMs)).end(epochMs(scheduled));
    const engine = this.root.child('engine', epochMs(scheduled));
    engine.child('prefill', epochMs(scheduled)).end(epochMs(first));
    engine.child('decode', epochMs(first)).end(epochMs(last));
    engine.end(epochMs(last));
    this.root.set({
      'gen_ai.latency.time_in_queue': sec(t.queueMs),
      'gen_ai.latency.time_to_first_token': sec(t.queueMs + t.prefillMs),
      'gen_ai.latency.time_in_model_prefill': sec(t.prefillMs),
      'gen_ai.latency.time_in_model_decode': sec(t.decodeMs),
      'gen_ai.latency.time_in_model_inference': sec(t.prefillMs + t.decodeMs),
      'gen_ai.latency.e2e': sec(t.totalMs),
    });
  }

  /** A child span over `[startMs, endMs]` (`performance.now()` ms), e.g. one pipeline stage. */
  child(name: string, startMs: number, endMs: number, attributes?: SpanAttributes): void {
    if (!this.root.recording) return;
    this.root.child(name, epochMs(startMs), attributes).end(epochMs(Math.max(startMs, endMs)));
  }

  /** Ends the SERVER span with the answer's status (error at 4xx/5xx) at `endMs`. */
  end(status: number, endMs: number, aborted = false): void {
    if (this.root.recording) {
      this.root.set({ 'http.response.status_code': status });
      if (status >= 400) {
        this.root.set({ 'error.type': String(status) });
        this.root.error(`HTTP ${status}`);
      } else if (aborted) {
        this.root.set({ 'error.type': 'client_closed' });
        this.root.error('the client closed the connection before the answer was complete');
      }
    }
    this.root.end(epochMs(endMs));
  }
}

const SPANS = new WeakMap<IncomingMessage, RequestSpan>();

/**
 * Starts the SERVER span of an inference request named `{method} {route}` (the route template,
 * as `http.route`) at `startMs` (`performance.now()` ms), ended when `res` closes; null when
 * tracing is off. Continues the W3C trace context of the request's headers.
 */
export function startRequestSpan(
  req: IncomingMessage,
  res: ServerResponse,
  route: string,
  startMs: number,
  attributes: SpanAttributes = {},
): RequestSpan | null {
  if (active === null) return null;
  const existing = SPANS.get(req);
  if (existing !== undefined) return existing;
  const method = req.method ?? 'POST';
  const root = active.server(`${method} ${route}`, req.headers, epochMs(startMs), {
    'http.request.method': method,
    'http.route': route,
    'url.path': (req.url ?? '').split('?')[0]!.slice(0, 256),
    ...attributes,
  });
  const span = new RequestSpan(root);
  SPANS.set(req, span);
  res.once('close', () => span.end(res.statusCode, performance.now(), !res.writableFinished));
  return span;
}

/** The request's span, when its door started one (undefined with tracing off, without a lookup). */
export function requestSpanOf(req: IncomingMessage): RequestSpan | undefined {
  return active === null ? undefined : SPANS.get(req);
}

/**
 * The trace id a request's exemplars carry: its span's when one is recorded (the incoming
 * traceparent's trace, or a new one), else a valid incoming traceparent's (a trace the sampler
 * dropped is exported by no one, so no exemplar points at it), else undefined.
 */
export function exemplarTraceId(req: IncomingMessage, span: RequestSpan | null | undefined): string | undefined {
  return span != null && span.recording ? span.traceId : incomingTraceId(req.headers);
}
