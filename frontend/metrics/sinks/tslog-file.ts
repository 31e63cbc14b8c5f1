/**
 * An append-only log file with an in-memory buffer and size-based rotation
 * (`ts_metrics.log` → `ts_metrics.log.1` … `.keep`, like log4j's RollingFile). `append` only
 * concatenates; the write happens on a short unref'd timer, when the buffer passes a bound,
 * or on `close`. Writes are synchronous inside the flush so lines never interleave or reorder.
 */
import * as fs from 'node:fs';
import type { MetricsLog } from './sink.js';

/** Rotation and buffering settings of a `TslogFile`. */
export interface TslogFileOptions {
  readonly maxBytes: number;
  readonly keep: number;
  /** Flush period of the buffer in ms. */
  readonly flushMs: number;
  /** Flush at once when this many characters are buffered (bounds memory). */
  readonly maxBufferChars: number;
  readonly log: MetricsLog;
}

/** One buffered, rotating log file. */
export class TslogFile {
  private buffer = '';
  private fd: number | null = null;
  private size = 0;
  private timer: NodeJS.Timeout | null = null;
  private failed = false;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly opts: TslogFileOptions,
  ) {}

  /** Append text (whole lines); never throws, never writes synchronously unless over the bound. */
  append(text: string): void {
    if (this.closed) return;
    this.buffer += text;
    if (this.buffer.length >= this.opts.maxBufferChars) {
      this.flush();
    } else if (this.timer === null) {
      this.timer = setTimeout(this.onTimer, this.opts.flushMs);
      this.timer.unref();
    }
  }

  private readonly onTimer = (): void => {
    this.timer = null;
    this.flush();
  };

  /** Write the buffer out now, rotating first when it would pass `maxBytes`. */
  flush(): void {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.buffer.length === 0) return;
    const chunk = Buffer.from(this.buffer, 'utf8');
    this.buffer = '';
    try {
      if (this.fd === null) this.open();
      if (this.size > 0 && this.size + chunk.length > this.opts.maxBytes) this.rotate();
      fs.writeSync(this.fd as number, chunk);
      this.size += chunk.length;
      this.failed = false;
    } catch (err) {
      // Losing a chunk beats blocking or crashing the server; say so once per failure streak.
      if (!this.failed) this.opts.log('error', `metrics log ${this.path}: write failed: ${String(err)}`);
      this.failed = true;
      this.closeFd();
    }
  }

  /** Flush and close the file. */
  close(): void {
    this.flush();
    this.closed = true;
    this.closeFd();
  }

  private open(): void {
    this.fd = fs.openSync(this.path, 'a');
    this.size = fs.fstatSync(this.fd).size;
  }

  private rotate(): void {
    this.closeFd();
    const keep = this.opts.keep;
    if (keep <= 0) {
      fs.rmSync(this.path, { force: true });
    } else {
      fs.rmSync(`${this.path}.${keep}`, { force: true });
      for (let i = keep - 1; i >= 1; i--) {
        if (fs.existsSync(`${this.path}.${i}`)) fs.renameSync(`${this.path}.${i}`, `${this.path}.${i + 1}`);
      }
      fs.renameSync(this.path, `${this.path}.1`);
    }
    this.open();
  }

  private closeFd(): void {
    if (this.fd === null) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // already gone; nothing to release
    }
    this.fd = null;
  }
}
