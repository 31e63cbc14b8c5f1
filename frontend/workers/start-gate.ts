/**
 * A counting semaphore shared by every pool of the server: at most `limit` workers load at
 * once, so scaling a model to many workers (or starting many models) forks them a few at a
 * time instead of all together, each loading its model on a CPU the others are not fighting for.
 */

/** Bounds concurrent worker start-ups (fork → ready or failed). */
export class StartGate {
  private heldValue = 0;
  private peakValue = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  /** Starts now being loaded. */
  get held(): number {
    return this.heldValue;
  }
  /** The most starts ever held at once (for tests and the log). */
  get peak(): number {
    return this.peakValue;
  }

  /** Resolves with a release function once a slot is free (FIFO). */
  acquire(): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = (): void => {
        this.heldValue++;
        this.peakValue = Math.max(this.peakValue, this.heldValue);
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.heldValue--;
          this.waiting.shift()?.();
        });
      };
      if (this.heldValue < this.limit) grant();
      else this.waiting.push(grant);
    });
  }
}
