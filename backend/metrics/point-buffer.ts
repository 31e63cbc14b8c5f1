/**
 * The worker's datapoint store: a preallocated Float64Array of (seriesId, value, requestRef,
 * timeMs) records, the request-id table those refs point into, and a cached clock.
 *
 * Why a cached clock: reading the clock costs more than the rest of a record (bound or not:
 * 50-200 ns against ~10 ns on these machines), so the time is refreshed on `setRequestIds` (each
 * batch) and on `flush` (after each batch, and on the worker's 1 s timer) only. A datapoint's
 * time is therefore the start of its batch, or at most about a second old outside batches —
 * the tslog sink prints whole seconds.
 */
import { NO_REQUEST, POINT_STRIDE } from '../../schema/ipc';

const INITIAL_POINTS = 256;

/** What `take()` hands to the flush: this flush's points and the request ids they reference. */
export interface TakenPoints {
  readonly points: Float64Array;
  readonly requestIds: readonly string[];
  readonly count: number;
}

/** Append-only point store with swap-on-take; never scans its contents. */
export class PointBuffer {
  private buf: Float64Array;
  /** The other half of the double buffer: the one the previous flush handed over. */
  private spare: Float64Array | null = null;
  private cap: number;
  private n = 0;
  private readonly max: number;
  /** Ref of the current batch's joined request ids, or NO_REQUEST. */
  private batchRef = NO_REQUEST;
  private batchIds: string | null = null;
  private requestIds: string[] = [];
  private requestIndex = new Map<string, number>();
  private timeMs: number;

  /**
   * @param maxPoints the cap (`limits.maxPointsPerFlush`); at the cap `onFull` is called, which
   *   must `take()` (the worker's flush), so nothing is ever lost.
   */
  constructor(
    maxPoints: number,
    private readonly onFull: () => void,
    private readonly nowMs: () => number,
  ) {
    this.max = Math.max(1, Math.floor(maxPoints));
    this.cap = Math.min(INITIAL_POINTS, this.max);
    this.buf = new Float64Array(this.cap * POINT_STRIDE);
    this.timeMs = nowMs();
  }

  /** Points buffered since the last take. */
  get count(): number {
    return this.n;
  }

  /** Current capacity in points (grows by doubling up to the cap). */
  get capacity(): number {
    return this.cap;
  }

  /** Appends one datapoint stamped with the batch's request ids and the cached time. */
  push(seriesId: number, value: number): void {
    if (this.n === this.cap) this.makeRoom();
    const b = this.buf;
    const i = this.n++ << 2; // POINT_STRIDE doubles
    b[i] = seriesId;
    b[i + 1] = value;
    b[i + 2] = this.batchRef;
    b[i + 3] = this.timeMs;
  }

  /** Appends one datapoint with an explicit request id (unbound path: a map lookup). */
  pushWithRequest(seriesId: number, value: number, requestId: string): void {
    if (this.n === this.cap) this.makeRoom();
    const ref = this.refOf(requestId);
    const b = this.buf;
    const i = this.n++ << 2; // POINT_STRIDE doubles
    b[i] = seriesId;
    b[i + 1] = value;
    b[i + 2] = ref;
    b[i + 3] = this.timeMs;
  }

  /** Sets the batch whose ids stamp bound records (TorchServe joins them with `,`). */
  setBatch(ids: readonly string[]): void {
    this.batchIds = ids.length === 0 ? null : ids.join(',');
    this.batchRef = this.batchIds === null ? NO_REQUEST : this.refOf(this.batchIds);
    this.tick();
  }

  /** Refreshes the cached clock. */
  tick(): void {
    this.timeMs = this.nowMs();
  }

  /**
   * Hands over everything buffered and starts afresh by swapping in the spare buffer: no copy,
   * no allocation once both buffers reached their size. The returned `points` is a view that
   * stays valid until the next `take()`; `process.send` serializes it before returning.
   */
  take(): TakenPoints {
    const count = this.n;
    const full = this.buf;
    const points = full.subarray(0, count * POINT_STRIDE);
    const spare = this.spare;
    this.buf = spare !== null && spare.length >= full.length ? spare : new Float64Array(full.length);
    this.cap = this.buf.length / POINT_STRIDE;
    this.spare = full;
    const requestIds = this.requestIds;
    this.n = 0;
    this.requestIds = [];
    this.requestIndex = new Map();
    this.batchRef = this.batchIds === null ? NO_REQUEST : this.refOf(this.batchIds);
    return { points, requestIds, count };
  }

  private refOf(requestId: string): number {
    let ref = this.requestIndex.get(requestId);
    if (ref === undefined) {
      ref = this.requestIds.length;
      this.requestIds.push(requestId);
      this.requestIndex.set(requestId, ref);
    }
    return ref;
  }

  private makeRoom(): void {
    if (this.cap < this.max) {
      const cap = Math.min(this.cap * 2, this.max);
      const next = new Float64Array(cap * POINT_STRIDE);
      next.set(this.buf);
      this.buf = next;
      this.cap = cap;
    } else {
      this.onFull();
      // onFull is the owner's flush and empties the buffer; should it ever not, start over
      // rather than write past the end.
      if (this.n === this.cap) this.take();
    }
  }
}
