/**
 * A manual clock for unit tests of code that takes a `Clock`: time moves only when the test
 * calls `advance`, which runs every timer due by then in deadline order, so a test asserts what
 * happens at exactly maxBatchDelay or responseTimeout without waiting in wall time.
 */
import type { Clock, ClockTimer } from '../../frontend/batching/clock.js';

interface Pending {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** A `Clock` whose time is advanced by the test. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, Pending>();

  constructor(startMs = 1000) {
    this.t = startMs;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): ClockTimer {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), seq: id, fn });
    return id;
  }

  clearTimeout(timer: ClockTimer): void {
    this.timers.delete(timer as number);
  }

  /** Timers armed and not yet fired or cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing each timer due on the way at its own deadline. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, Pending] | null = null;
      for (const e of this.timers)
        if (
          e[1].at <= end &&
          (next === null || e[1].at < next[1].at || (e[1].at === next[1].at && e[1].seq < next[1].seq))
        )
          next = e;
      if (next === null) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = end;
  }
}
