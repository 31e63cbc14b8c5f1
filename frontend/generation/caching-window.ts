/**
 * Prefix-cache hit rate over roughly the last `maxRecentRequests` requests, in tokens (vLLM's
 * CachingMetrics): batches of (requests, queries, hits) are kept until the requests they hold
 * exceed the window; the newest batch is always kept, even when it alone exceeds it.
 */

interface Batch {
  readonly requests: number;
  readonly queries: number;
  readonly hits: number;
}

/** Sliding-window prefix-cache hit rate for the log line. */
export class CachingWindow {
  private readonly batches: Batch[] = [];
  private requests = 0;
  private queries = 0;
  private hits = 0;

  constructor(private readonly maxRecentRequests = 1000) {}

  /** Lookups of records without a request, joined to the next batch that has one. */
  private pendingQueries = 0;
  private pendingHits = 0;

  /** Batches held (at most one per request of the window, plus one). */
  get size(): number {
    return this.batches.length;
  }

  /**
   * Adds one stats record; a record with neither requests nor lookups is ignored. `requests`
   * counts first outputs, which come after the lookups (vLLM counts both at the lookup): the
   * lookups of a record without one wait for the next batch, so a request aborted during its
   * prefill adds no batch of its own (such batches were kept until 1000 requests came).
   */
  observe(requests: number, queries: number, hits: number): void {
    if (requests <= 0 && queries <= 0) return;
    this.queries += queries;
    this.hits += hits;
    if (requests <= 0) {
      this.pendingQueries += queries;
      this.pendingHits += hits;
      return;
    }
    this.batches.push({ requests, queries: queries + this.pendingQueries, hits: hits + this.pendingHits });
    this.pendingQueries = 0;
    this.pendingHits = 0;
    this.requests += requests;
    while (this.batches.length > 1 && this.requests > this.maxRecentRequests) {
      const old = this.batches.shift() as Batch;
      this.requests -= old.requests;
      this.queries -= old.queries;
      this.hits -= old.hits;
    }
  }

  /** Σhits / Σqueries over the window; 0 when nothing was queried. */
  get hitRate(): number {
    return this.queries > 0 ? this.hits / this.queries : 0;
  }
}
