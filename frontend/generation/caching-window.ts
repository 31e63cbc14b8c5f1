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

  /** Adds one stats record; a record with no request is ignored (nothing was looked up). */
  observe(requests: number, queries: number, hits: number): void {
    if (requests <= 0 && queries <= 0) return;
    this.batches.push({ requests, queries, hits });
    this.requests += requests;
    this.queries += queries;
    this.hits += hits;
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
