/**
 * An append-only log file with size-based rotation (`x.log` → `.1` … `.keep`, like log4j's
 * RollingFile): the one writer of the metric logs (ts_metrics.log, model_metrics.log), the access
 * log and ts_log.log. It is written by sonic-boom (the writer pino uses; this is the only file
 * that imports it) with a bounded queue, or, with `sync`, line by line.
 *
 * Queued (the default): `append` encodes the line straight into the chunk being filled: a
 * buffer, taken from a small pool, that is full at `chunkChars` bytes. No string is
 * concatenated, flattened or encoded again later (those copies and their garbage were most of
 * the metric sink's cost). A chunk goes to sonic-boom as soon as it is full, or on a short
 * unref'd timer; the next one waits until sonic-boom reports the last one written (`drain`), so
 * lines are never interleaved or reordered, and a written chunk's buffer goes back to the pool.
 * Rotation happens between two chunks, when the next one would take the file past `maxBytes`:
 * renames with fs.promises (rotation.ts), then a fresh writer, so the old file's lines are all in it before it
 * becomes `.1`, no line lands in the wrong file and the event loop never waits on the disk. What
 * is still queued when the process exits is written synchronously (`flushSync`, on 'exit').
 *
 * Sync: each line is written at once with fs.writeSync (a low-volume log whose last line before
 * a crash must be on disk); rotation is then synchronous too, before the line that would pass
 * `maxBytes`.
 *
 * A line is lost — and counted through `onLost` — when the queue is full as it is appended, or
 * when the open or the write carrying it fails (EACCES, ENOSPC, EISDIR…); losses are warned
 * about at most once per `rewarnMs`. The next chunk tries a fresh open, so a file that becomes
 * writable again is written again. A rotation that fails (a rename refused, `.keep` a directory)
 * is counted through `onRotateFailed` and warned about with its error; the file is reopened (a
 * fresh open, which may fail and lose lines like any other) and lines go on into it past
 * `maxBytes`, and the rotation is tried again at most once per `rewarnMs`.
 */
import * as fs from 'node:fs';
import sonicBoom from 'sonic-boom';
import type { SonicBoom as Writer } from 'sonic-boom';
import { rotateAsync, rotateSync } from './rotation.js';

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

/** A piece of the queue handed to the writer: its bytes, lines and characters. */
interface Chunk {
  readonly bytes: Buffer;
  readonly lines: number;
  readonly chars: number;
  /** The pooled buffer `bytes` is a view of (null: a one-off for an oversized line). */
  readonly pooled: Buffer | null;
}

/** Chunk buffers kept for reuse per file (one being filled, one being written, spares). */
const POOL_SIZE = 4;

// sonic-boom is CommonJS (`module.exports = SonicBoom`): Node's ESM loader sees no named export.
const { SonicBoom } = sonicBoom;

/** sonic-boom's fd, which its type definitions do not declare. */
function fdOf(w: Writer): number {
  return (w as unknown as { fd: number }).fd;
}

/** `write` of a writer in `contentMode: 'buffer'` (typed for strings only). */
function writeBytes(w: Writer, bytes: Buffer): void {
  (w as unknown as { write(b: Buffer): boolean }).write(bytes);
}

/** All of `bytes` to `fd` (writeSync may write less than asked). */
function writeAllSync(fd: number, bytes: Buffer): void {
  for (let off = 0; off < bytes.length;) off += fs.writeSync(fd, bytes, off);
}

/** Queued files not yet closed: what the process writes out synchronously as it exits. */
const unclosed = new Set<RotatingFile>();
let exitHooked = false;
function flushAllAtExit(): void {
  for (const f of unclosed) f.flushSync();
}

/** One rotating log file, queued and written asynchronously, or written line by line (`sync`). */
export class RotatingFile {
  /** Queue `text` (whole lines); never throws. Queued: never touches the disk. */
  readonly append: (text: string) => void;
  /** Full chunks waiting, oldest first. */
  private readonly parts: Chunk[] = [];
  /** The chunk being filled: a pooled buffer, its bytes used, lines and characters. */
  private current: Buffer | null = null;
  private currentBytes = 0;
  private currentLines = 0;
  private currentChars = 0;
  /** Written chunk buffers ready for reuse. */
  private readonly pool: Buffer[] = [];
  /** Lines waiting (in `parts` and `current`). */
  private pendingLines = 0;
  /** Characters queued: waiting plus the chunk being written. */
  private queuedChars = 0;
  private chunk: Chunk | null = null;
  private writer: Writer | null = null;
  /** The writer's file is open and `size` known. */
  private ready = false;
  /** The current chunk was handed to the writer (a `drain` before that is not about it). */
  private writing = false;
  /** flushSync rotated the file under the writer: it is ended once its chunk in flight is written. */
  private retire = false;
  /** The asynchronous renames of a rotation are under way. */
  private rotating = false;
  private size = 0;
  /** The sync mode's descriptor (-1: none open). */
  private fd = -1;
  /** A failed rotation is not tried again before this time (ms). */
  private rotateRetryAtMs = 0;
  private rotateFailures = 0;
  private timer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  /** `close()` has given up waiting: nothing more is opened, rotated or written. */
  private finished = false;
  /** Lines appended, and lines settled (written or lost): what `flush()` waits on. */
  private appended = 0;
  private settled = 0;
  private readonly waiters: { readonly target: number; readonly resolve: () => void }[] = [];
  private warnedAtMs: number | null = null;
  private lostSinceWarning = 0;

  /** With `sync`, the file is opened here and an error (EACCES, ENOENT dir) is thrown to the caller. */
  constructor(
    readonly path: string,
    private readonly opts: RotatingFileOptions,
  ) {
    if (opts.sync === true) {
      this.fd = fs.openSync(path, 'a');
      this.size = fs.fstatSync(this.fd).size;
      this.append = (text) => this.appendSync(text);
    } else {
      this.append = (text) => this.appendQueued(text);
      unclosed.add(this);
      if (!exitHooked) {
        exitHooked = true;
        process.on('exit', flushAllAtExit);
      }
    }
  }

  private now(): number {
    return (this.opts.nowMs ?? Date.now)();
  }

  private get rewarnMs(): number {
    return this.opts.rewarnMs ?? ROTATING_FILE_REWARN_MS;
  }

  private appendSync(text: string): void {
    if (this.closing !== null) return;
    this.appended++;
    const bytes = Buffer.from(text, 'utf8');
    if (
      this.fd >= 0 &&
      this.size > 0 &&
      this.size + bytes.length > this.opts.maxBytes &&
      this.now() >= this.rotateRetryAtMs
    ) {
      try {
        rotateSync(this.path, this.opts.keep);
        try {
          fs.closeSync(this.fd);
        } catch {
          // closed already: nothing to release
        }
        this.fd = -1;
      } catch (err) {
        this.rotationFailed(err);
      }
    }
    try {
      if (this.fd < 0) {
        this.fd = fs.openSync(this.path, 'a');
        this.size = fs.fstatSync(this.fd).size;
      }
      writeAllSync(this.fd, bytes);
      this.size += bytes.length;
      this.settle(1);
    } catch (err) {
      this.lose(1, String(err));
    }
  }

  private appendQueued(text: string): void {
    if (this.closing !== null) return;
    this.appended++;
    if (this.queuedChars + text.length > this.opts.maxQueueChars) {
      this.lose(1, `queue full (${this.opts.maxQueueChars} characters)`);
      return;
    }
    this.pendingLines++;
    this.queuedChars += text.length;
    // A chunk is full at `chunkChars` bytes; its buffer has room for twice that, so a line
    // started before the mark always fits unless it is longer than a whole chunk.
    const cap = this.opts.chunkChars * 2;
    let need = text.length * 3; // at most 3 bytes per UTF-16 unit; exact only near the end
    if (this.currentBytes + need > cap) need = Buffer.byteLength(text, 'utf8');
    if (need > cap) {
      this.seal();
      this.parts.push({ bytes: Buffer.from(text, 'utf8'), lines: 1, chars: text.length, pooled: null });
    } else {
      if (this.currentBytes + need > cap) this.seal();
      if (this.current === null) this.current = this.pool.pop() ?? Buffer.allocUnsafe(cap);
      this.currentBytes += this.current.write(text, this.currentBytes, 'utf8');
      this.currentLines++;
      this.currentChars += text.length;
      if (this.currentBytes >= this.opts.chunkChars) this.seal();
    }
    if (this.parts.length > 0) {
      if (this.chunk === null) this.pump();
    } else if (this.timer === null && this.chunk === null) {
      this.startTimer();
    }
  }

  /** Move the chunk being filled (if any) to the waiting list. */
  private seal(): void {
    const cur = this.current;
    if (cur === null || this.currentLines === 0) return;
    this.parts.push({
      bytes: cur.subarray(0, this.currentBytes),
      lines: this.currentLines,
      chars: this.currentChars,
      pooled: cur,
    });
    this.current = null;
    this.currentBytes = 0;
    this.currentLines = 0;
    this.currentChars = 0;
  }

  /** Resolves when every line appended so far is written or counted lost. */
  flush(): Promise<void> {
    if (this.settled >= this.appended) return Promise.resolve();
    const done = new Promise<void>((resolve) => this.waiters.push({ target: this.appended, resolve }));
    this.pump();
    return done;
  }

  /**
   * Write every queued line now, synchronously, for a process that is exiting or crashing (no
   * callback will run again). Rotates first where a chunk would pass `maxBytes`, unless the
   * asynchronous renames of a rotation are under way (then the lines go to the file as it is
   * named now). A chunk already handed to sonic-boom is left to it: it lands in the file it has
   * open, whatever that file is renamed to. Never throws.
   */
  flushSync(): void {
    if (this.finished || this.opts.sync === true) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.seal();
    const waiting = this.chunk !== null && !this.writing ? this.chunk : null;
    if (waiting !== null) this.chunk = null;
    const chunks = waiting === null ? this.parts.splice(0) : [waiting, ...this.parts.splice(0)];
    this.pendingLines = 0;
    if (chunks.length === 0) return;
    const canRotate = !this.rotating;
    const inFlight = this.writing && this.chunk !== null ? this.chunk.bytes.length : 0;
    let size = this.writer !== null && this.ready ? this.size + inFlight : this.statSize();
    let fd = -1;
    let moved = false;
    for (const c of chunks) {
      this.queuedChars -= c.chars;
      try {
        if (canRotate && size > 0 && size + c.bytes.length > this.opts.maxBytes && this.now() >= this.rotateRetryAtMs) {
          try {
            rotateSync(this.path, this.opts.keep);
            moved = true;
            size = 0;
            if (fd >= 0) fs.closeSync(fd);
            fd = -1;
          } catch (err) {
            this.rotationFailed(err);
          }
        }
        if (fd < 0) fd = fs.openSync(this.path, 'a');
        writeAllSync(fd, c.bytes);
        size += c.bytes.length;
        this.settle(c.lines);
      } catch (err) {
        this.lose(c.lines, String(err));
      }
      if (c.pooled !== null && this.pool.length < POOL_SIZE) this.pool.push(c.pooled);
    }
    if (fd >= 0) {
      try {
        fs.closeSync(fd);
      } catch {
        // nothing more can be done
      }
    }
    if (moved && this.writer !== null) {
      // The writer's descriptor now names a rotated file: no later chunk may go to it.
      if (this.writing) this.retire = true;
      else this.dropWriter();
    } else if (this.writer !== null && this.ready) {
      this.size = size - inFlight; // the chunk in flight is added by its 'write' event
    }
  }

  private statSize(): number {
    try {
      return fs.statSync(this.path).size;
    } catch {
      return 0;
    }
  }

  /** End the current writer (after what it holds is written) and forget it. */
  private dropWriter(): void {
    const w = this.writer;
    this.writer = null;
    this.ready = false;
    this.writing = false;
    this.retire = false;
    try {
      w?.end(); // ends once its open or its write in flight completes
    } catch {
      // already destroyed
    }
  }

  /**
   * Stop taking lines, write out the queue and close the file, within `closeTimeoutMs`; lines
   * still queued after that are counted lost. Idempotent; never rejects.
   */
  close(): Promise<void> {
    if (this.closing !== null) return this.closing;
    if (this.opts.sync === true) {
      this.finished = true;
      try {
        if (this.fd >= 0) fs.closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = -1;
      this.closing = Promise.resolve();
      return this.closing;
    }
    const flushed = this.flush();
    this.closing = new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        clearTimeout(bound);
        this.finishClose();
        resolve();
      };
      const bound = setTimeout(finish, this.opts.closeTimeoutMs ?? 2000);
      bound.unref();
      void flushed.then(finish);
    });
    return this.closing;
  }

  private finishClose(): void {
    this.finished = true;
    unclosed.delete(this);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    // A chunk still waiting for an open or a rotation will never be written; one handed to
    // sonic-boom is written by end() below.
    const stuck = this.chunk !== null && !this.writing ? this.chunk : null;
    if (stuck !== null) {
      this.chunk = null;
      this.queuedChars -= stuck.chars;
    }
    const n = this.pendingLines + (stuck === null ? 0 : stuck.lines);
    if (n > 0) {
      this.parts.length = 0;
      this.current = null;
      this.currentBytes = 0;
      this.currentLines = 0;
      this.currentChars = 0;
      this.pendingLines = 0;
      this.lose(n, `not written within the close timeout (${this.opts.closeTimeoutMs ?? 2000} ms)`);
    }
    const w = this.writer;
    this.writer = null;
    try {
      // end() lets a write in flight finish, then closes the fd.
      w?.end();
    } catch {
      // already destroyed
    }
    for (const waiter of this.waiters.splice(0)) waiter.resolve();
  }

  private startTimer(): void {
    this.timer = setTimeout(this.onTimer, this.opts.flushMs);
    this.timer.unref();
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.pump();
  };

  /** Hand the oldest waiting chunk to the writer, unless one is already on its way. */
  private pump(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.chunk !== null || this.pendingLines === 0) return;
    if (this.parts.length === 0) this.seal();
    const chunk = this.parts.shift() as Chunk;
    this.pendingLines -= chunk.lines;
    // sonic-boom in buffer mode writes these bytes as they are; the buffer is reused after its drain.
    this.chunk = chunk;
    this.step();
  }

  /** Move the chunk on: open a writer, rotate, or write it. */
  private step(): void {
    const chunk = this.chunk;
    if (chunk === null || this.finished) return;
    try {
      if (this.writer === null) {
        if (!this.rotating) this.open();
        return;
      }
      if (!this.ready) return; // the open under way calls step() when the size is known
      if (this.size > 0 && this.size + chunk.bytes.length > this.opts.maxBytes && this.now() >= this.rotateRetryAtMs) {
        void this.rotate();
        return;
      }
      this.writing = true;
      writeBytes(this.writer, chunk.bytes);
    } catch (err) {
      // sonic-boom throws only on misuse (a destroyed writer); count rather than crash.
      this.failed(this.writer, err as Error);
    }
  }

  private open(): void {
    const w = new SonicBoom({ dest: this.path, append: true, sync: false, mkdir: false, contentMode: 'buffer' });
    this.writer = w;
    this.ready = false;
    this.writing = false;
    // Every writer keeps its error listener for life: an unheard 'error' would crash the server.
    w.on('error', (err: Error) => this.failed(w, err));
    w.on('ready', () => {
      if (w !== this.writer) return;
      fs.fstat(fdOf(w), (err, st) => {
        if (w !== this.writer) return;
        this.size = err === null ? st.size : 0;
        this.ready = true;
        this.step();
      });
    });
    w.on('write', (n: number) => {
      if (w === this.writer) this.size += n;
    });
    w.on('drain', () => {
      if (w === this.writer && this.writing) this.written();
    });
  }

  private written(): void {
    const chunk = this.chunk as Chunk;
    this.chunk = null;
    this.writing = false;
    if (this.retire) this.dropWriter();
    this.queuedChars -= chunk.chars;
    if (chunk.pooled !== null && this.pool.length < POOL_SIZE) this.pool.push(chunk.pooled);
    this.settle(chunk.lines);
    this.next();
  }

  /** After a chunk: write the next at once if it is full or awaited, else on the timer. */
  private next(): void {
    if (this.pendingLines === 0) return;
    if (this.parts.length > 0 || this.waiters.length > 0) this.pump();
    else if (this.timer === null) this.startTimer();
  }

  /** The writer failed to open or write: its chunk is lost; the next chunk opens a fresh one. */
  private failed(w: Writer | null, err: Error): void {
    if (w !== this.writer) return; // an abandoned writer: its chunk was settled already
    this.writer = null;
    this.ready = false;
    this.writing = false;
    this.retire = false;
    try {
      w?.destroy();
    } catch {
      // nothing left to release
    }
    const chunk = this.chunk;
    this.chunk = null;
    if (chunk !== null) {
      this.queuedChars -= chunk.chars;
      this.lose(chunk.lines, String(err));
    }
    // Not at once: a file that stays unwritable would be retried in a loop.
    this.next();
  }

  /** Shift `.1` … `.keep` up, move the file to `.1`, then let `step()` open a fresh one. */
  private async rotate(): Promise<void> {
    this.dropWriter(); // nothing is queued in it: rotation happens between chunks
    this.rotating = true;
    try {
      await rotateAsync(this.path, this.opts.keep);
    } catch (err) {
      this.rotationFailed(err);
    }
    this.rotating = false;
    this.step();
  }

  /**
   * Count a failed rotation and hold the next try back by `rewarnMs` (renames refused now are
   * likely refused at the next chunk too); each try warns, with its error, so at most once per
   * `rewarnMs`. The state is set before the warning: a warning written to this very file
   * (ts_log.log) must not start another rotation.
   */
  private rotationFailed(err: unknown): void {
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
      `${this.opts.label} ${this.path}: rotation failed: ${String(err)}; reopening the file to write on past its size bound (lines an open or write then fails on are lost and counted as lost lines)${counted}${first}`,
    );
  }

  private settle(lines: number): void {
    this.settled += lines;
    while (this.waiters.length > 0 && (this.waiters[0] as { target: number }).target <= this.settled) {
      (this.waiters.shift() as { resolve: () => void }).resolve();
    }
  }

  /**
   * Count `lines` lost; warn on the first loss and then at most once per `rewarnMs`, with how
   * many were lost in between (a streak-once warning would keep a later outage silent). The
   * warning is written last: when it goes to this very file and fails, the loss it adds is
   * inside the interval and only counted.
   */
  private lose(lines: number, reason: string): void {
    this.settle(lines);
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
