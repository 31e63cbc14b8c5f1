/**
 * Trace ids for exemplars: the HTTP layer notes each request's trace id (its span's with tracing
 * on, else the incoming `traceparent`'s as OpenTelemetry's W3C propagator reads it:
 * frontend/tracing/request-span.ts); cells look it up when they keep an exemplar. Bounded: the oldest
 * entries go first, so the map never grows with traffic, and each one that goes is counted in
 * `tsserve_cache_evictions_total{cache="trace_ids"}`.
 */

/** Most request ids remembered (in-flight requests plus a margin for late worker flushes). */
const MAX_ENTRIES = 4096;

/** Request id → trace id, for the requests that carried a trace context. */
export class TraceIds {
  private readonly byRequest = new Map<string, string>();
  /** Called once per entry evicted at the bound (the frontend's self-metric), if anyone counts. */
  private evicted: (() => void) | null = null;

  constructor(private readonly max = MAX_ENTRIES) {}

  /**
   * Count every entry evicted at the bound with `count` (a later one replaces it); returns what
   * stops it, which does nothing once another took its place.
   */
  countEvictions(count: () => void): () => void {
    this.evicted = count;
    return () => {
      if (this.evicted === count) this.evicted = null;
    };
  }

  /** Remember that `requestId` belongs to trace `traceId` (no-op when traceId is undefined). */
  set(requestId: string, traceId: string | undefined): void {
    if (traceId === undefined) return;
    // A known id is only updated: evicting for it shrank the table by one for nothing.
    if (this.byRequest.size >= this.max && !this.byRequest.has(requestId)) {
      const oldest = this.byRequest.keys().next();
      if (oldest.done !== true) {
        this.byRequest.delete(oldest.value);
        this.evicted?.();
      }
    }
    this.byRequest.set(requestId, traceId);
  }

  /**
   * The trace id of `requestId` (for a worker batch's joined ids `a,b`, of the first one);
   * free when no request carried one.
   */
  get(requestId: string): string | undefined {
    if (this.byRequest.size === 0) return undefined;
    const found = this.byRequest.get(requestId);
    if (found !== undefined) return found;
    const comma = requestId.indexOf(',');
    return comma > 0 ? this.byRequest.get(requestId.slice(0, comma)) : undefined;
  }
}

/** The process-wide table the HTTP layer writes and the exposition cells read. */
export const traceIds = new TraceIds();
