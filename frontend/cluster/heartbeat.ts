/**
 * One front's heartbeat as the primary keeps it: the pings sent, the last one answered, and
 * when the front was last heard from. A front is judged hung by pings it left unanswered, not
 * by the clock alone: if the primary's own loop was blocked, it sent no pings meanwhile, so a
 * front whose answers wait unread in the primary is never taken for a hung one.
 */

/** What a tick decides for one front. */
export type HeartbeatTick =
  | { readonly kind: 'ping'; readonly seq: number }
  | { readonly kind: 'hung'; readonly missed: number; readonly silentMs: number };

/** The heartbeat of one front process. */
export class Heartbeat {
  private sent = 0;
  private answered = 0;
  private heardAt: number;

  /** `misses`: unanswered pings that make a front hung; `now`: when it said hello (ms). */
  constructor(
    private readonly misses: number,
    now: number,
  ) {
    this.heardAt = now;
  }

  /**
   * Called every interval: hung once `misses` pings in a row went unanswered (the front was
   * silent for at least `misses` intervals), else the next ping to send.
   */
  tick(now: number): HeartbeatTick {
    const missed = this.sent - this.answered;
    if (missed >= this.misses) return { kind: 'hung', missed, silentMs: now - this.heardAt };
    this.sent++;
    return { kind: 'ping', seq: this.sent };
  }

  /** The front answered ping `seq` (answers of older pings than one already answered change nothing). */
  answer(seq: number, now: number): void {
    if (seq <= this.answered || seq > this.sent) return;
    this.answered = seq;
    this.heardAt = now;
  }
}
