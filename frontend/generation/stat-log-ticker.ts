/**
 * Prints every engine's stat line every `intervalSec` seconds (vLLM's log interval, default 10;
 * a non-positive value falls back to 10). Info lines go to the server log; debug lines (idle
 * engines) only when debug logging is on. The timer is unref'd.
 */
import type { StatLine } from './logging-stat-logger.js';

/** Something with stat loggers: a generation model. */
export interface StatLineSource {
  /** One line per engine, prefixed with what names it. */
  statLines(): readonly StatLine[];
}

/** Drives the periodic stat lines of every registered source. */
export class StatLogTicker {
  private readonly sources = new Set<StatLineSource>();
  private timer: NodeJS.Timeout | null = null;
  readonly intervalSec: number;

  constructor(
    intervalSec: number,
    private readonly print: (line: StatLine) => void,
  ) {
    this.intervalSec = Number.isFinite(intervalSec) && intervalSec > 0 ? intervalSec : 10;
  }

  /** Adds a source (starts the timer on the first one). */
  add(source: StatLineSource): void {
    this.sources.add(source);
    if (this.timer === null) {
      this.timer = setInterval(() => this.tick(), this.intervalSec * 1000);
      this.timer.unref();
    }
  }

  /** Removes a source (stops the timer after the last one). */
  remove(source: StatLineSource): void {
    this.sources.delete(source);
    if (this.sources.size === 0 && this.timer !== null) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  /** Prints one round of lines now. */
  tick(): void {
    for (const s of this.sources) for (const line of s.statLines()) this.print(line);
  }
}
