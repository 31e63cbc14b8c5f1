/**
 * The worker's datapoint store: per datapoint its series id (Uint32Array) and value
 * (Float64Array), 12 bytes; request refs and times as runs (`RunList`), since they change per
 * batch or per flush, not per point; the request-id table the refs point into; a cached clock.
 *
 * Why runs: the datapoints are the bytes the IPC channel carries and both processes copy, so a
 * datapoint carries only what is its own. Why a cached clock: reading the clock costs more than
 * the rest of a record (bound or not: 50-200 ns against ~10 ns on these machines), so the time
 * is refreshed on `setBatch` (each batch) and on `flush` (after each batch, and on the worker's
 * 1 s timer) only. A datapoint's time is therefore the start of its batch, or at most about a
 * second old outside batches — the tslog sink prints whole seconds.
 */
import { NO_REQUEST } from '../ipc.js';
import { RunList } from './run-list.js';

const INITIAL_POINTS = 256;
/** Run starts travel as Int32; no realistic cap comes near (it would be 12 GiB of datapoints). */
const MAX_POINTS = 2 ** 30;

/** What `take()` hands to the flush: this flush's datapoints, their runs and request ids. */
export interface TakenPoints {
  readonly seriesIds: Uint32Array;
  readonly values: Float64Array;
  readonly requestRuns: Int32Array;
  readonly requestIds: readonly string[];
  readonly timeRuns: Float64Array;
  readonly count: number;
}

/** Append-only point store with swap-on-take; never scans its contents. */
export class PointBuffer {
  private ids: Uint32Array;
  private values: Float64Array;
  /** The other half of the double buffer: the arrays the previous flush handed over. */
  private spareIds: Uint32Array | null = null;
  private spareValues: Float64Array | null = null;
  private readonly refRuns = new RunList(Int32Array);
  private readonly timeRuns = new RunList(Float64Array);
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
   *   normally `take()`s (the worker's flush). While the IPC channel is congested it cannot, and
   *   the buffer is the bounded backlog: a point that finds it full is dropped and `onDrop` called.
   */
  constructor(
    maxPoints: number,
    private readonly onFull: () => void,
    private readonly nowMs: () => number,
    private readonly onDrop: () => void = () => {},
  ) {
    this.max = Math.min(MAX_POINTS, Math.max(1, Math.floor(maxPoints)));
    this.cap = Math.min(INITIAL_POINTS, this.max);
    this.ids = new Uint32Array(this.cap);
    this.values = new Float64Array(this.cap);
    this.timeMs = nowMs();
    this.refRuns.open(0, NO_REQUEST);
    this.timeRuns.open(0, this.timeMs);
  }

  /** Points buffered since the last take. */
  get count(): number {
    return this.n;
  }

  /** Current capacity in points (grows by doubling up to the cap). */
  get capacity(): number {
    return this.cap;
  }

  /** Appends one datapoint; the runs in force give it the batch's request ids and the time. */
  push(seriesId: number, value: number): void {
    if (this.n === this.cap && !this.makeRoom()) return;
    const i = this.n++;
    this.ids[i] = seriesId;
    this.values[i] = value;
  }

  /**
   * Appends one datapoint with an explicit request id (unbound path: a map lookup): it starts a
   * run of that id (or extends one just before it), and the batch's run resumes after it.
   */
  pushWithRequest(seriesId: number, value: number, requestId: string): void {
    if (this.n === this.cap && !this.makeRoom()) return;
    this.refRuns.open(this.n, this.refOf(requestId));
    const i = this.n++;
    this.ids[i] = seriesId;
    this.values[i] = value;
    this.refRuns.open(this.n, this.batchRef);
  }

  /** Sets the batch whose ids stamp bound records (TorchServe joins them with `,`). */
  setBatch(ids: readonly string[]): void {
    this.batchIds = ids.length === 0 ? null : ids.join(',');
    this.batchRef = this.batchIds === null ? NO_REQUEST : this.refOf(this.batchIds);
    this.refRuns.open(this.n, this.batchRef);
    this.tick();
  }

  /** Refreshes the cached clock; datapoints from here on carry the new time. */
  tick(): void {
    this.timeMs = this.nowMs();
    this.timeRuns.open(this.n, this.timeMs);
  }

  /**
   * Hands over everything buffered and starts afresh by swapping in the spare arrays: no copy,
   * no scan, no allocation once both halves reached their size. The returned arrays are views
   * that stay valid until the next `take()`; `process.send` serializes them before returning.
   */
  take(): TakenPoints {
    const count = this.n;
    const ids = this.ids;
    const values = this.values;
    const taken: TakenPoints = {
      seriesIds: ids.subarray(0, count),
      values: values.subarray(0, count),
      requestRuns: this.refRuns.take(count),
      requestIds: this.requestIds,
      timeRuns: this.timeRuns.take(count),
      count,
    };
    const spareIds = this.spareIds;
    const spareValues = this.spareValues;
    const fits = spareIds !== null && spareValues !== null && spareIds.length >= ids.length;
    this.ids = fits ? spareIds : new Uint32Array(ids.length);
    this.values = fits ? (spareValues as Float64Array) : new Float64Array(ids.length);
    this.cap = this.ids.length;
    this.spareIds = ids;
    this.spareValues = values;
    this.n = 0;
    this.requestIds = [];
    this.requestIndex = new Map();
    this.batchRef = this.batchIds === null ? NO_REQUEST : this.refOf(this.batchIds);
    this.refRuns.open(0, this.batchRef);
    this.timeRuns.open(0, this.timeMs);
    return taken;
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

  /** Grows, or flushes at the cap; false when the point must be dropped (the backlog is full). */
  private makeRoom(): boolean {
    if (this.cap < this.max) {
      const cap = Math.min(this.cap * 2, this.max);
      const ids = new Uint32Array(cap);
      const values = new Float64Array(cap);
      ids.set(this.ids);
      values.set(this.values);
      this.ids = ids;
      this.values = values;
      this.cap = cap;
      return true;
    }
    this.onFull();
    if (this.n < this.cap) return true;
    this.onDrop();
    return false;
  }
}
