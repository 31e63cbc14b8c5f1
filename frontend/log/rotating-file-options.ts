/**
 * The settings of a rotating log file and the defaults the logs share (TorchServe's log4j
 * rotation), apart from the writer so the sinks and the logger can name them without it.
 */

/** Where a rotating file's warnings go. */
export type RotatingFileLog = (level: 'warn' | 'error', msg: string) => void;

/** Rotation, queue and error-reporting settings of a `RotatingFile`. */
export interface RotatingFileOptions {
  readonly maxBytes: number;
  readonly keep: number;
  /** What the file is, first in its warnings (`metrics log`, `access log`). */
  readonly label: string;
  /** Write every line at once, synchronously; the queue settings below are then unused. */
  readonly sync?: boolean;
  /** How long a line may wait in the queue before its chunk is written, in ms. */
  readonly flushMs: number;
  /** Chunk size in bytes (a pooled buffer each): a full chunk is written at once, without waiting for the timer. */
  readonly chunkChars: number;
  /** Most characters queued, waiting or being written; a line that would pass it is dropped. */
  readonly maxQueueChars: number;
  readonly log: RotatingFileLog;
  /** Called with the number of lines lost (queue full, failed open or write). */
  readonly onLost?: (lines: number) => void;
  /** Where lost lines are counted, for the warning (default `the sink errors`). */
  readonly countedIn?: string;
  /** Called once for every rotation that failed. */
  readonly onRotateFailed?: () => void;
  /** Where failed rotations are counted, for the warning. */
  readonly rotationCountedIn?: string;
  /** Least time between two warnings, and between two tries of a failing rotation, in ms (default 60000). */
  readonly rewarnMs?: number;
  /** Clock for the warning interval (default Date.now). */
  readonly nowMs?: () => number;
  /** Upper bound on `close()` in ms (default 2000). */
  readonly closeTimeoutMs?: number;
}

/** Every log file is rotated when the next write would take it past this many bytes by default… */
export const LOG_MAX_BYTES = 100 * 1024 * 1024;
/** …keeping this many rotated files (`.1` newest): TorchServe's log4j settings. */
export const LOG_KEEP = 5;

/** Default least time between two warnings about lost lines (ms). */
export const ROTATING_FILE_REWARN_MS = 60_000;
