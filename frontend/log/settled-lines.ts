/**
 * What `RotatingFile.flush()` waits on: lines appended and lines settled (written or counted
 * lost), each flush resolved once every line appended before it is settled.
 */

/** Lines appended and settled, and the flushes waiting for them. */
export class SettledLines {
  private appended = 0;
  private settled = 0;
  private readonly waiters: { readonly target: number; readonly resolve: () => void }[] = [];

  /** One more line was appended. */
  add(): void {
    this.appended++;
  }

  /** Resolves when every line appended so far is settled; null when every one already is. */
  whenSettled(): Promise<void> | null {
    if (this.settled >= this.appended) return null;
    return new Promise<void>((resolve) => this.waiters.push({ target: this.appended, resolve }));
  }

  /** `lines` more were written or lost: resolves the flushes whose lines are all settled now. */
  settle(lines: number): void {
    this.settled += lines;
    while (this.waiters.length > 0 && (this.waiters[0] as { target: number }).target <= this.settled) {
      (this.waiters.shift() as { resolve: () => void }).resolve();
    }
  }

  /** A flush is waiting (the next chunk goes out at once rather than on the timer). */
  get awaited(): boolean {
    return this.waiters.length > 0;
  }

  /** Resolves every waiting flush (the file is closed: what is left will never be written). */
  releaseAll(): void {
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }
}
