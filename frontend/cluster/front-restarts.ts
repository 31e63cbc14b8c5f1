/**
 * What the supervisor does when a front exits unexpectedly: counts and logs the restart, replaces
 * a serving front at once (the shared port keeps its capacity), and backs off a front that died
 * before it listened (it will likely die again), doubling the wait each time up to a bound.
 */
import type { Log } from '../log/log.js';

/** First wait before starting again a front that died before it listened (doubled each time it does again). */
const RESTART_BACKOFF_MS = 1_000;
/** Longest such wait (the worker pool's bound). */
const MAX_RESTART_BACKOFF_MS = 30_000;

/** Restart settings of the fronts (FrontSupervisorOptions' fields). */
export interface FrontRestartOptions {
  readonly log: Log;
  /** `tsserve_front_restarts_total`: recorded at 0 at construction, 1 per unexpected exit. */
  readonly restartCounter?: { record(n: number): void };
  /** First backoff before starting again a front that died before it listened (default 1 s). */
  readonly restartBackoffMs?: number;
}

/** The restart and backoff policy of the fronts. */
export class FrontRestarts {
  /** Fronts restarted after an unexpected exit. */
  count = 0;
  /** Fronts in a row that died before they listened (reset when one listens). */
  private failedStarts = 0;
  /** Restarts waiting out their backoff. */
  private readonly pending = new Set<NodeJS.Timeout>();

  constructor(private readonly opts: FrontRestartOptions) {
    opts.restartCounter?.record(0);
  }

  /** A front listened: the next one that dies before it listens waits the first backoff again. */
  listened(): void {
    this.failedStarts = 0;
  }

  /**
   * A front exited while the fronts serve: counts it, logs it and calls `restart` (at once for one
   * that listened, after the backoff for one that did not, unless `stopped()` says so by then).
   */
  exited(pid: number | undefined, why: string, listening: boolean, restart: () => void, stopped: () => boolean): void {
    this.count++;
    this.opts.restartCounter?.record(1);
    if (listening) {
      // A serving front is replaced at once: the shared port keeps its capacity.
      this.opts.log.error(`front process ${String(pid)} exited (${why}); starting another (restart ${this.count})`);
      restart();
      return;
    }
    // One that died before it listened will likely die again: forked at once, it looped as
    // fast as it could fail (a CPU and a log line per fork). Backed off as workers are.
    const delay = Math.min(
      (this.opts.restartBackoffMs ?? RESTART_BACKOFF_MS) * 2 ** this.failedStarts++,
      MAX_RESTART_BACKOFF_MS,
    );
    this.opts.log.error(
      `front process ${String(pid)} exited before it listened (${why}); starting another in ${delay} ms (restart ${this.count})`,
    );
    const t = setTimeout(() => {
      this.pending.delete(t);
      if (!stopped()) restart();
    }, delay);
    t.unref();
    this.pending.add(t);
  }

  /** Cancels every restart still waiting out its backoff (the supervisor stops). */
  cancel(): void {
    for (const t of this.pending) clearTimeout(t);
    this.pending.clear();
  }
}
