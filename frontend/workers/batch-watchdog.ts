/**
 * A worker's batch watchdog (TorchServe's responseTimeout): a worker whose batch outlives the
 * limit takes no new batch from the deadline on, and is killed a grace later, so one stuck
 * handler cannot hold the model (the pool starts a replacement).
 */
import { performance } from 'perf_hooks';

/**
 * The watchdog fires this long after a batch's responseTimeout, so each request's own timeout
 * (the batcher's 504, armed at its arrival with the same limit) always answers first. Node
 * truncates a fractional delay, so without it the watchdog could expire a millisecond before
 * the request timer, and under load the worker's exit answered 500 "Worker died" instead.
 */
export const WATCHDOG_GRACE_MS = 50;

/** The deadline of the batch a worker can be running. */
export class BatchWatchdog {
  private timer: NodeJS.Timeout | null = null;
  /**
   * Set when the oldest batch passed its responseTimeout: no new batch goes to this worker in
   * the grace before the kill (it would only fail with it, 500, instead of waiting for the
   * replacement).
   */
  overdue = false;

  constructor(
    /** Bound on one batch, ms (none when undefined: the watchdog never fires). */
    private readonly limitMs: number | undefined,
    /** The deadline passed (`overdue` is set). */
    private readonly onOverdue: () => void,
    /** The grace passed too: kill the worker, with this reason. */
    private readonly onKill: (why: string) => void,
  ) {}

  /** Arms for a batch the worker could start at `startedMs` (performance.now ms), replacing any earlier deadline. */
  arm(startedMs: number): void {
    this.disarm();
    const limit = this.limitMs;
    if (limit === undefined) return;
    // At the deadline: take no more batches; the grace later: kill (the requests' own 504s first).
    this.timer = setTimeout(
      () => {
        this.overdue = true;
        this.onOverdue();
        this.timer = setTimeout(() => {
          this.timer = null;
          this.onKill(`a batch outlived responseTimeout ${limit / 1000} s; killed (it is replaced)`);
        }, WATCHDOG_GRACE_MS);
        this.timer.unref();
      },
      Math.max(0, startedMs + limit - performance.now()),
    );
    this.timer.unref();
  }

  /** No batch in flight (or the worker is gone): no deadline, and not overdue. */
  disarm(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.overdue = false;
  }
}
