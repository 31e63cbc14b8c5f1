/**
 * The synchronous writes of `RotatingFile.flushSync` (a process that is exiting or crashing: no
 * callback will run again): chunks appended with fs.writeSync through one descriptor, rotating
 * first where a chunk would pass `maxBytes`, as the queued path rotates between chunks.
 */
import * as fs from 'node:fs';
import type { FileWarnings } from './file-warnings.js';
import { rotateSync } from './rotation.js';
import { writeAllSync } from './sync-file.js';

/** Appends to a rotating log file synchronously, for the exit path. */
export class ExitWriter {
  /** The open descriptor (-1: none open; the next write opens one). */
  private fd = -1;
  /** The file was rotated: the queued path's writer now holds a rotated file. */
  moved = false;

  constructor(
    private readonly path: string,
    private readonly opts: { readonly maxBytes: number; readonly keep: number },
    private readonly warnings: FileWarnings,
    /** The file's size as the writes start, then after each. */
    public size: number,
    /** False while the asynchronous renames of a rotation are under way (the file is not rotated again). */
    private readonly canRotate: boolean,
  ) {}

  /** Appends `bytes`, rotating first when due; throws what the open or the write threw. */
  write(bytes: Buffer): void {
    if (
      this.canRotate &&
      this.size > 0 &&
      this.size + bytes.length > this.opts.maxBytes &&
      this.warnings.rotationDue()
    ) {
      try {
        rotateSync(this.path, this.opts.keep);
        this.moved = true;
        this.size = 0;
        if (this.fd >= 0) fs.closeSync(this.fd);
        this.fd = -1;
      } catch (err) {
        this.warnings.rotationFailed(err);
      }
    }
    if (this.fd < 0) this.fd = fs.openSync(this.path, 'a');
    writeAllSync(this.fd, bytes);
    this.size += bytes.length;
  }

  /** Closes the descriptor, if one is open; never throws. */
  close(): void {
    if (this.fd < 0) return;
    try {
      fs.closeSync(this.fd);
    } catch {
      // nothing more can be done
    }
    this.fd = -1;
  }
}
