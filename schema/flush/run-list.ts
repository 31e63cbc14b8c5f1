/**
 * A run-length list of one per-datapoint attribute (request ref or time): pairs (index of the
 * first datapoint of the run, attribute), double-buffered like the datapoints themselves.
 *
 * Runs are opened on the rare paths only (a new batch, a clock refresh, an explicit request
 * id), never by a bound record, which stays two stores. The list is kept minimal as it is
 * built: a run opened where the last one starts replaces it (it is still empty), and a run
 * carrying what the run in force carries is not opened at all.
 */
import { RUN_STRIDE } from '../ipc.js';

/** The typed arrays a run list can live in. */
export type RunArray = Int32Array | Float64Array;

const INITIAL_RUNS = 16;

/** Growable (start, attribute) pairs with swap-on-take. */
export class RunList<A extends RunArray> {
  private runs: A;
  /** The array the previous take handed over, reused by the next one. */
  private spare: A | null = null;
  /** Runs in `runs`. */
  private k = 0;

  constructor(private readonly make: new (length: number) => A) {
    this.runs = new make(INITIAL_RUNS * RUN_STRIDE);
  }

  /** Runs currently held (the last one may still be empty). */
  get length(): number {
    return this.k;
  }

  /** Datapoints from index `start` on carry `x` (until the next run). */
  open(start: number, x: number): void {
    const r = this.runs;
    let k = this.k;
    if (k > 0 && r[(k - 1) * RUN_STRIDE] === start) k--; // the last run is empty
    if (k > 0 && r[(k - 1) * RUN_STRIDE + 1] === x) {
      // already in force
      this.k = k;
      return;
    }
    if ((k + 1) * RUN_STRIDE > r.length) this.grow();
    const w = this.runs;
    w[k * RUN_STRIDE] = start;
    w[k * RUN_STRIDE + 1] = x;
    this.k = k + 1;
  }

  /**
   * Hands over the runs of `count` datapoints (an empty last run left out) as a view valid
   * until the next take, and starts an empty list in the spare array.
   */
  take(count: number): A {
    const r = this.runs;
    const k = this.k > 0 && r[(this.k - 1) * RUN_STRIDE] === count ? this.k - 1 : this.k;
    const out = r.subarray(0, k * RUN_STRIDE) as A;
    this.runs = this.spare ?? new this.make(r.length);
    this.spare = r;
    this.k = 0;
    return out;
  }

  /** Runs never outnumber datapoints + 1, so growth stops at the point cap. */
  private grow(): void {
    const next = new this.make(this.runs.length * 2);
    next.set(this.runs);
    this.runs = next;
  }
}
