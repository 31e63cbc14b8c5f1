/**
 * A rotation-aware follower of one log file (`tail -F`): it reads by offset from an open fd and,
 * on each poll, compares the path's inode and size with what it holds. A new inode means the
 * file was rotated (renamed to `.1`, as `RotatingFile` does): the old fd is read to its end first,
 * then the new file from its start. A size below the offset means truncation: read from 0.
 */
import * as fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

const CHUNK_BYTES = 64 * 1024;

/** The rotated copies of `path` that exist (`.N` … `.1`), oldest first. */
export function rotatedPaths(path: string): string[] {
  const found: string[] = [];
  for (let i = 1; fs.existsSync(`${path}.${i}`); i++) found.push(`${path}.${i}`);
  return found.reverse();
}

/** Follows one file across rotations and truncations; every complete line is returned once. */
export class FileFollower {
  private fd: number | null = null;
  private ino = -1;
  private offset = 0;
  private partial = '';
  private decoder = new StringDecoder('utf8');
  private readonly buf = Buffer.allocUnsafe(CHUNK_BYTES);

  constructor(readonly path: string) {}

  /** The complete lines written since the last poll, in file order (without newlines). */
  poll(): string[] {
    const out: string[] = [];
    const st = fs.statSync(this.path, { throwIfNoEntry: false });
    if (this.fd !== null) {
      if (st === undefined || st.ino !== this.ino) {
        // Rotated away: what the writer put in the old file before the rename comes first.
        this.drain(out);
        if (this.partial !== '') out.push(this.partial);
        this.reset();
      } else if (st.size < this.offset) {
        this.partial = '';
        this.offset = 0;
        this.decoder = new StringDecoder('utf8');
      }
    }
    if (this.fd === null && st !== undefined) {
      try {
        this.fd = fs.openSync(this.path, 'r');
        this.ino = fs.fstatSync(this.fd).ino;
      } catch {
        this.reset(); // gone between stat and open: the next poll finds the new one
        return out;
      }
    }
    if (this.fd !== null) this.drain(out);
    return out;
  }

  /** Release the fd (idempotent). */
  close(): void {
    this.reset();
  }

  private drain(out: string[]): void {
    const fd = this.fd as number;
    for (;;) {
      const n = fs.readSync(fd, this.buf, 0, CHUNK_BYTES, this.offset);
      if (n === 0) break;
      this.offset += n;
      const text = this.partial + this.decoder.write(this.buf.subarray(0, n));
      const lines = text.split('\n');
      this.partial = lines.pop() as string;
      for (const l of lines) out.push(l);
    }
  }

  private reset(): void {
    if (this.fd !== null) {
      try {
        fs.closeSync(this.fd);
      } catch {
        // already closed
      }
    }
    this.fd = null;
    this.ino = -1;
    this.offset = 0;
    this.partial = '';
    this.decoder = new StringDecoder('utf8');
  }
}
