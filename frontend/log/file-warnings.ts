/**
 * What a rotating file says about its troubles: lost lines (counted through `onLost`, warned
 * about on the first loss and then at most once per `rewarnMs`, with how many were lost in
 * between) and failed rotations (counted through `onRotateFailed`, each try warned about, and
 * the next try held back by `rewarnMs`).
 */
import type { RotatingFileOptions } from './rotating-file-options.js';
import { ROTATING_FILE_REWARN_MS } from './rotating-file-options.js';

/** The loss and rotation-failure accounting of one rotating file. */
export class FileWarnings {
  private warnedAtMs: number | null = null;
  private lostSinceWarning = 0;
  private rotateRetryAtMs = 0;
  private rotateFailures = 0;

  constructor(
    private readonly path: string,
    private readonly opts: RotatingFileOptions,
  ) {}

  /** The options' clock (default Date.now). */
  now(): number {
    return (this.opts.nowMs ?? Date.now)();
  }

  /** Whether a rotation may be tried now (none failed within the last `rewarnMs`). */
  rotationDue(): boolean {
    return this.now() >= this.rotateRetryAtMs;
  }

  private get rewarnMs(): number {
    return this.opts.rewarnMs ?? ROTATING_FILE_REWARN_MS;
  }

  /**
   * Count a failed rotation and hold the next try back by `rewarnMs` (renames refused now are
   * likely refused at the next chunk too); each try warns, with its error, so at most once per
   * `rewarnMs`. The state is set before the warning: a warning written to this very file
   * (ts_log.log) must not start another rotation.
   */
  rotationFailed(err: unknown): void {
    this.rotateRetryAtMs = this.now() + this.rewarnMs;
    this.rotateFailures++;
    try {
      this.opts.onRotateFailed?.();
    } catch {
      // counting must not break the write that follows
    }
    const counted = this.opts.rotationCountedIn === undefined ? '' : `; counted in ${this.opts.rotationCountedIn}`;
    const first =
      this.rotateFailures === 1
        ? `, and tried again at most once every ${Math.round(this.rewarnMs / 1000)} s`
        : ` (failure ${this.rotateFailures})`;
    this.opts.log(
      'warn',
      `${this.opts.label} ${this.path}: rotation failed: ${String(err)}; writing on in the current file${counted}${first}`,
    );
  }

  /**
   * Count `lines` lost; warn on the first loss and then at most once per `rewarnMs`, with how
   * many were lost in between (a streak-once warning would keep a later outage silent). The
   * warning is written last: when it goes to this very file and fails, the loss it adds is
   * inside the interval and only counted.
   */
  lost(lines: number, reason: string): void {
    try {
      this.opts.onLost?.(lines);
    } catch {
      // counting must not turn a lost line into a thrown error
    }
    this.lostSinceWarning += lines;
    const now = this.now();
    const every = this.rewarnMs;
    let msg: string;
    if (this.warnedAtMs === null) {
      msg = `${this.opts.label} ${this.path}: ${reason}; ${lines} line(s) lost; every lost line is counted in ${this.opts.countedIn ?? 'the sink errors'}, and this warning repeats at most once every ${Math.round(every / 1000)} s while lines are lost`;
    } else if (now - this.warnedAtMs >= every) {
      msg = `${this.opts.label} ${this.path}: ${this.lostSinceWarning} lines lost since the last warning, latest: ${reason}`;
    } else {
      return;
    }
    this.warnedAtMs = now;
    this.lostSinceWarning = 0;
    this.opts.log('warn', msg);
  }
}
