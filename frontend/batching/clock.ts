/** The time source of the batcher: real timers in the server, a manual clock in unit tests. */
import { performance } from 'perf_hooks';

/** An armed timer, opaque to its user (a Node Timeout object, or the fake clock's number). */
export type ClockTimer = object | number;

/** Monotonic time in ms and one-shot timers (what `Batcher` waits on: maxBatchDelay, responseTimeout). */
export interface Clock {
  now(): number;
  /** Arms `fn` after `ms`; `unref`: a real timer then never holds the process open. */
  setTimeout(fn: () => void, ms: number, unref?: boolean): ClockTimer;
  clearTimeout(timer: ClockTimer): void;
}

/** `performance.now()` and Node's timers. */
export const REAL_CLOCK: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms, unref = false) => {
    const t = setTimeout(fn, ms);
    if (unref) t.unref();
    return t;
  },
  clearTimeout: (timer) => clearTimeout(timer as NodeJS.Timeout),
};
