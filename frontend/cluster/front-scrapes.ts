/**
 * A front's process-metrics scrapes in flight: a `/metrics` render asks every front for its
 * process families and waits a bounded time, so a slow or dead front costs the render only its
 * own samples.
 */
import type { ForeignFamily } from '../metrics/exposition/foreign-family.js';

/** A scrape waits this long for a front's process metrics, then renders without them. */
const SCRAPE_TIMEOUT_MS = 1_000;

/** The scrapes one front has not answered yet. */
export class FrontScrapes {
  private readonly waiting = new Map<number, (f: readonly ForeignFamily[]) => void>();

  /** Sends scrape `id` with `send`; resolves with the front's families, or none if unsent or late. */
  ask(id: number, send: (id: number) => boolean): Promise<readonly ForeignFamily[]> {
    return new Promise<readonly ForeignFamily[]>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve([]);
      }, SCRAPE_TIMEOUT_MS);
      this.waiting.set(id, (families) => {
        clearTimeout(timer);
        resolve(families);
      });
      if (!send(id)) {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve([]);
      }
    });
  }

  /** The front's answer to scrape `id` (ignored when it came too late). */
  answer(id: number, families: readonly ForeignFamily[]): void {
    const done = this.waiting.get(id);
    this.waiting.delete(id);
    done?.(families);
  }

  /** The front exited: every scrape still waiting resolves with none. */
  gone(): void {
    for (const done of this.waiting.values()) done([]);
  }
}
