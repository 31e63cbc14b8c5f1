/**
 * An append-only log file with size-based rotation (`x.log` → `.1` … `.keep`, like log4j's
 * RollingFile): the one writer of the metric logs (ts_metrics.log, model_metrics.log), the access
 * log and ts_log.log. It is written by sonic-boom (the writer pino uses; this is the only file
 * that imports it) with a bounded queue, or, with `sync`, line by line.
 *
 * Queued (the default): `append` encodes the line straight into the chunk being filled
 * (chunk-queue.ts: a pooled buffer, full at `chunkChars` bytes; no string is concatenated,
 * flattened or encoded again later, copies whose garbage were most of the metric sink's cost).
 * A chunk goes to sonic-boom as soon as it is full, or on a short unref'd timer; the next one
 * waits until sonic-boom reports the last one written (`drain`), so lines are never interleaved
 * or reordered. Rotation happens between two chunks, when the next one would take the file past
 * `maxBytes`: renames with fs.promises (rotation.ts), then a fresh writer, so no line lands in
 * the wrong file and the event loop never waits on the disk. What is still queued when the
 * process exits is written synchronously (`flushSync`, exit-flush.ts).
 *
 * Sync: each line is written at once (sync-file.ts), so a low-volume log's last line is on disk.
 *
 * A line is lost — and counted through `onLost` — when the queue is full as it is appended, or
 * when the open or the write carrying it fails (EACCES, ENOSPC, EISDIR…); losses are warned
 * about at most once per `rewarnMs`. The next chunk tries a fresh open, so a file that becomes
 * writable again is written again. A rotation that fails (a rename refused, `.keep` a directory)
 * is counted through `onRotateFailed` and warned about with its error; the file is reopened (a
 * fresh open, which may fail and lose lines like any other) and lines go on into it past
 * `maxBytes`, and the rotation is tried again at most once per `rewarnMs` (file-warnings.ts).
 */
import * as fs from 'node:fs';
import sonicBoom from 'sonic-boom';
import type { SonicBoom as Writer } from 'sonic-boom';
import { ExitWriter } from './exit-writer.js';
import { rotateAsync } from './rotation.js';
import { SyncFile } from './sync-file.js';
import { ChunkQueue } from './chunk-queue.js';
import type { Chunk } from './chunk-queue.js';
import { FileWarnings } from './file-warnings.js';
import { SettledLines } from './settled-lines.js';
import { closedAtExit, flushAtExit } from './exit-flush.js';
import type { RotatingFileOptions } from './rotating-file-options.js';

export type { RotatingFileLog, RotatingFileOptions } from './rotating-file-options.js';
export { LOG_KEEP, LOG_MAX_BYTES, ROTATING_FILE_REWARN_MS } from './rotating-file-options.js';

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

/** One rotating log file, queued and written asynchronously, or written line by line (`sync`). */
export class RotatingFile {
  /** Queue `text` (whole lines); never throws. Queued: never touches the disk. */
  readonly append: (text: string) => void;
  /** Lines waiting for the writer, and the characters queued (waiting plus the chunk being written). */
  private readonly queue: ChunkQueue;
  /** Lost lines and failed rotations: counted, warned about, and the next rotation held back. */
  private readonly warnings: FileWarnings;
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
  /** The sync mode's file (null: queued). */
  private syncFile: SyncFile | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closing: Promise<void> | null = null;
  /** `close()` has given up waiting: nothing more is opened, rotated or written. */
  private finished = false;
  /** Lines appended, and lines settled (written or lost): what `flush()` waits on. */
  private readonly lines = new SettledLines();

  /** With `sync`, the file is opened here and an error (EACCES, ENOENT dir) is thrown to the caller. */
  constructor(
    readonly path: string,
    private readonly opts: RotatingFileOptions,
  ) {
    this.queue = new ChunkQueue(opts.chunkChars, opts.maxQueueChars);
    this.warnings = new FileWarnings(path, opts);
    if (opts.sync === true) {
      this.syncFile = new SyncFile(path, opts.maxBytes, opts.keep, this.warnings);
      this.append = (text) => this.appendSync(text);
    } else {
      this.append = (text) => this.appendQueued(text);
      flushAtExit(this);
    }
  }

  private appendSync(text: string): void {
    if (this.closing !== null) return;
    this.lines.add();
    const lost = (this.syncFile as SyncFile).write(text);
    if (lost === null) this.lines.settle(1);
    else this.lose(1, lost);
  }

  private appendQueued(text: string): void {
    if (this.closing !== null) return;
    this.lines.add();
    if (!this.queue.add(text)) {
      this.lose(1, `queue full (${this.opts.maxQueueChars} characters)`);
      return;
    }
    if (this.queue.full > 0) {
      if (this.chunk === null) this.pump();
    } else if (this.timer === null && this.chunk === null) {
      this.startTimer();
    }
  }

  /** Resolves when every line appended so far is written or counted lost. */
  flush(): Promise<void> {
    const done = this.lines.whenSettled();
    if (done === null) return Promise.resolve();
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
    const waiting = this.chunk !== null && !this.writing ? this.chunk : null;
    if (waiting !== null) this.chunk = null;
    const chunks = waiting === null ? this.queue.takeAll() : [waiting, ...this.queue.takeAll()];
    if (chunks.length === 0) return;
    const inFlight = this.writing && this.chunk !== null ? this.chunk.bytes.length : 0;
    const size = this.writer !== null && this.ready ? this.size + inFlight : this.statSize();
    const out = new ExitWriter(this.path, this.opts, this.warnings, size, !this.rotating);
    for (const c of chunks) {
      this.queue.forget(c);
      try {
        out.write(c.bytes);
        this.lines.settle(c.lines);
      } catch (err) {
        this.lose(c.lines, String(err));
      }
      this.queue.recycle(c);
    }
    out.close();
    if (out.moved && this.writer !== null) {
      // The writer's descriptor now names a rotated file: no later chunk may go to it.
      if (this.writing) this.retire = true;
      else this.dropWriter();
    } else if (this.writer !== null && this.ready) {
      this.size = out.size - inFlight; // the chunk in flight is added by its 'write' event
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
      this.syncFile?.close();
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
    closedAtExit(this);
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    // A chunk still waiting for an open or a rotation will never be written; one handed to
    // sonic-boom is written by end() below.
    const stuck = this.chunk !== null && !this.writing ? this.chunk : null;
    if (stuck !== null) {
      this.chunk = null;
      this.queue.forget(stuck);
    }
    const n = this.queue.pendingLines + (stuck === null ? 0 : stuck.lines);
    if (n > 0) {
      this.queue.clear();
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
    this.lines.releaseAll();
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
    if (this.chunk !== null || this.queue.pendingLines === 0) return;
    const chunk = this.queue.shift();
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
      if (this.size > 0 && this.size + chunk.bytes.length > this.opts.maxBytes && this.warnings.rotationDue()) {
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
    this.queue.release(chunk);
    this.lines.settle(chunk.lines);
    this.next();
  }

  /** After a chunk: write the next at once if it is full or awaited, else on the timer. */
  private next(): void {
    if (this.queue.pendingLines === 0) return;
    if (this.queue.full > 0 || this.lines.awaited) this.pump();
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
      this.queue.forget(chunk);
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
      this.warnings.rotationFailed(err);
    }
    this.rotating = false;
    this.step();
  }

  /** Settles `lines` as lost, then counts and maybe warns (file-warnings.ts). */
  private lose(lines: number, reason: string): void {
    this.lines.settle(lines);
    this.warnings.lost(lines, reason);
  }
}
