/**
 * An append-only metric log file written off the event loop by sonic-boom (the writer pino
 * uses; this is the only file that imports it), with a bounded queue and size-based rotation
 * (`ts_metrics.log` → `.1` … `.keep`, like log4j's RollingFile).
 *
 * `append` encodes the line straight into the chunk being filled: a buffer, taken from a small
 * pool, that is full at `chunkChars` bytes. No string is concatenated, flattened or encoded
 * again later (those copies and their garbage were most of the sink's cost). A chunk goes to
 * sonic-boom as soon as it is full, or on a short unref'd timer; the next one waits until
 * sonic-boom reports the last one written (`drain`), so lines are never interleaved or
 * reordered, and a written chunk's buffer goes back to the pool. Rotation happens between two
 * chunks, when the next one would take the file past `maxBytes`: renames with fs.promises,
 * then a fresh writer, so no line lands in the wrong file and the event loop never waits on
 * the disk.
 *
 * A line is lost — and counted through `onLost` — when the queue is full as it is appended, or
 * when the open or the write carrying its chunk fails (EACCES, ENOSPC, EISDIR…); losses are
 * warned about at most once per `rewarnMs`. The next chunk tries a fresh open, so a file that
 * becomes writable again is written again.
 */
import * as fs from 'node:fs';
import * as nodePath from 'node:path';
import sonicBoom from 'sonic-boom';
import type { SonicBoom as Writer } from 'sonic-boom';
import type { MetricsLog } from './sink.js';

/** Rotation, queue and error-reporting settings of a `TslogFile`. */
export interface TslogFileOptions {
  readonly maxBytes: number;
  readonly keep: number;
  /** How long a line may wait in the queue before its chunk is written, in ms. */
  readonly flushMs: number;
  /** Chunk size in bytes (a pooled buffer each): a full chunk is written at once, without waiting for the timer. */
  readonly chunkChars: number;
  /** Most characters queued, waiting or being written; a line that would pass it is dropped. */
  readonly maxQueueChars: number;
  readonly log: MetricsLog;
  /** Called with the number of lines lost (queue full, failed open or write). */
  readonly onLost?: (lines: number) => void;
  /** Where lost lines are counted, for the warning (default `the sink errors`). */
  readonly countedIn?: string;
  /** Least time between two warnings in ms (default 60000). */
  readonly rewarnMs?: number;
  /** Clock for the warning interval (default Date.now). */
  readonly nowMs?: () => number;
  /** Upper bound on `close()` in ms (default 2000). */
  readonly closeTimeoutMs?: number;
}

/** Default least time between two warnings about lost lines (ms). */
export const TSLOG_REWARN_MS = 60_000;

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

async function renameIfExists(from: string, to: string): Promise<void> {
  try {
    await fs.promises.rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** One queued, rotating log file written asynchronously. */
export class TslogFile {
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
  private size = 0;
  /** Rotation failed for the current chunk: write it to the current file rather than lose it. */
  private rotateFailed = false;
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
  private rotateWarnedAtMs: number | null = null;

  constructor(
    readonly path: string,
    private readonly opts: TslogFileOptions,
  ) {}

  /** Queue whole lines; never throws, never touches the disk. */
  append(text: string): void {
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
    this.parts.push({ bytes: cur.subarray(0, this.currentBytes), lines: this.currentLines, chars: this.currentChars, pooled: cur });
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
   * Stop taking lines, write out the queue and close the file, within `closeTimeoutMs`; lines
   * still queued after that are counted lost. Idempotent; never rejects.
   */
  close(): Promise<void> {
    if (this.closing !== null) return this.closing;
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
    this.rotateFailed = false;
    this.step();
  }

  /** Move the chunk on: open a writer, rotate, or write it. */
  private step(): void {
    const chunk = this.chunk;
    if (chunk === null || this.finished) return;
    try {
      if (this.writer === null) {
        this.open();
        return;
      }
      if (!this.ready) return; // the open under way calls step() when the size is known
      if (this.size > 0 && this.size + chunk.bytes.length > this.opts.maxBytes && !this.rotateFailed) {
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
    const old = this.writer;
    this.writer = null;
    this.ready = false;
    try {
      old?.end(); // nothing is queued in it: rotation happens between chunks
    } catch {
      // already closed
    }
    const p = this.path;
    const keep = this.opts.keep;
    try {
      if (keep <= 0) {
        await fs.promises.rm(p, { force: true });
      } else {
        await fs.promises.rm(`${p}.${keep}`, { force: true });
        // One listing instead of keep-1 renames that mostly fail with ENOENT.
        const names = new Set(await fs.promises.readdir(nodePath.dirname(p)));
        const base = nodePath.basename(p);
        for (let i = keep - 1; i >= 1; i--) {
          if (names.has(`${base}.${i}`)) await renameIfExists(`${p}.${i}`, `${p}.${i + 1}`);
        }
        await renameIfExists(p, `${p}.1`);
      }
    } catch (err) {
      this.rotateFailed = true;
      const now = (this.opts.nowMs ?? Date.now)();
      if (this.rotateWarnedAtMs === null || now - this.rotateWarnedAtMs >= (this.opts.rewarnMs ?? TSLOG_REWARN_MS)) {
        this.rotateWarnedAtMs = now;
        this.opts.log('warn', `metrics log ${p}: rotation failed: ${String(err)}; writing on in the current file`);
      }
    }
    this.step();
  }

  private settle(lines: number): void {
    this.settled += lines;
    while (this.waiters.length > 0 && (this.waiters[0] as { target: number }).target <= this.settled) {
      (this.waiters.shift() as { resolve: () => void }).resolve();
    }
  }

  /**
   * Count `lines` lost; warn on the first loss and then at most once per `rewarnMs`, with how
   * many were lost in between (a streak-once warning would keep a later outage silent).
   */
  private lose(lines: number, reason: string): void {
    this.settle(lines);
    try {
      this.opts.onLost?.(lines);
    } catch {
      // counting must not turn a lost line into a thrown error
    }
    this.lostSinceWarning += lines;
    const now = (this.opts.nowMs ?? Date.now)();
    const every = this.opts.rewarnMs ?? TSLOG_REWARN_MS;
    if (this.warnedAtMs === null) {
      this.opts.log('warn', `metrics log ${this.path}: ${reason}; ${lines} line(s) lost; every lost line is counted in ${this.opts.countedIn ?? 'the sink errors'}, and this warning repeats at most once every ${Math.round(every / 1000)} s while lines are lost`);
    } else if (now - this.warnedAtMs >= every) {
      this.opts.log('warn', `metrics log ${this.path}: ${this.lostSinceWarning} lines lost since the last warning, latest: ${reason}`);
    } else {
      return;
    }
    this.warnedAtMs = now;
    this.lostSinceWarning = 0;
  }
}
