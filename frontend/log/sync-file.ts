/**
 * The synchronous mode of a rotating file (`sync: true`): each line is written at once with
 * fs.writeSync, for a low-volume log whose last line before a crash must be on disk; rotation
 * is then synchronous too, before the line that would pass `maxBytes`.
 */
import * as fs from 'node:fs';
import { rotateSync } from './rotation.js';
import type { FileWarnings } from './file-warnings.js';

/** All of `bytes` to `fd` (writeSync may write less than asked). */
export function writeAllSync(fd: number, bytes: Buffer): void {
  for (let off = 0; off < bytes.length;) off += fs.writeSync(fd, bytes, off);
}

/** A log file written line by line, synchronously, with size rotation. */
export class SyncFile {
  /** The open descriptor (-1: none open; the next line opens one). */
  private fd: number;
  private size: number;

  /** Opens the file; an error (EACCES, ENOENT dir) is thrown to the caller. */
  constructor(
    private readonly path: string,
    private readonly maxBytes: number,
    private readonly keep: number,
    private readonly warnings: FileWarnings,
  ) {
    this.fd = fs.openSync(path, 'a');
    this.size = fs.fstatSync(this.fd).size;
  }

  /** Writes `text` now, rotating first when it would pass `maxBytes`; the error when it is lost, else null. */
  write(text: string): string | null {
    const bytes = Buffer.from(text, 'utf8');
    if (this.fd >= 0 && this.size > 0 && this.size + bytes.length > this.maxBytes && this.warnings.rotationDue()) {
      try {
        rotateSync(this.path, this.keep);
        try {
          fs.closeSync(this.fd);
        } catch {
          // closed already: nothing to release
        }
        this.fd = -1;
      } catch (err) {
        this.warnings.rotationFailed(err);
      }
    }
    try {
      if (this.fd < 0) {
        this.fd = fs.openSync(this.path, 'a');
        this.size = fs.fstatSync(this.fd).size;
      }
      writeAllSync(this.fd, bytes);
      this.size += bytes.length;
      return null;
    } catch (err) {
      return String(err);
    }
  }

  /** Closes the descriptor; never throws. */
  close(): void {
    try {
      if (this.fd >= 0) fs.closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = -1;
  }
}
