/**
 * The bounded queue of a rotating file: `add` encodes a line straight into the chunk being
 * filled, a pooled buffer that is full at `chunkChars` bytes, so no string is concatenated,
 * flattened or encoded again later; full chunks wait in order for the writer, and a written
 * chunk's buffer goes back to the pool.
 */

/** A piece of the queue handed to the writer: its bytes, lines and characters. */
export interface Chunk {
  readonly bytes: Buffer;
  readonly lines: number;
  readonly chars: number;
  /** The pooled buffer `bytes` is a view of (null: a one-off for an oversized line). */
  readonly pooled: Buffer | null;
}

/** Chunk buffers kept for reuse per file (one being filled, one being written, spares). */
const POOL_SIZE = 4;

/** Lines waiting for the writer, in chunks, within `maxQueueChars` characters. */
export class ChunkQueue {
  /** Lines added and not yet handed to the writer (in `parts` or the chunk being filled). */
  pendingLines = 0;
  /** Characters queued, waiting or being written: what `maxQueueChars` bounds. */
  queuedChars = 0;
  /** Full chunks waiting, oldest first. */
  private readonly parts: Chunk[] = [];
  /** The chunk being filled: a pooled buffer, its bytes used, lines and characters. */
  private current: Buffer | null = null;
  private currentBytes = 0;
  private currentLines = 0;
  private currentChars = 0;
  private readonly pool: Buffer[] = [];

  constructor(
    private readonly chunkChars: number,
    private readonly maxQueueChars: number,
  ) {}

  /** Full chunks waiting for the writer. */
  get full(): number {
    return this.parts.length;
  }

  /** Queues `text` (whole lines); false, with nothing queued, when it would pass `maxQueueChars`. */
  add(text: string): boolean {
    if (this.queuedChars + text.length > this.maxQueueChars) return false;
    this.pendingLines++;
    this.queuedChars += text.length;
    // A chunk is full at `chunkChars` bytes; its buffer has room for twice that, so a line
    // started before the mark always fits unless it is longer than a whole chunk.
    const cap = this.chunkChars * 2;
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
      if (this.currentBytes >= this.chunkChars) this.seal();
    }
    return true;
  }

  /** Move the chunk being filled (if any) to the waiting list. */
  seal(): void {
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

  /** The oldest chunk for the writer (the one being filled when none is full); call with lines pending. */
  shift(): Chunk {
    if (this.parts.length === 0) this.seal();
    const chunk = this.parts.shift() as Chunk;
    this.pendingLines -= chunk.lines;
    return chunk;
  }

  /** Every pending line, in chunks, for a synchronous write; `release` each once written. */
  takeAll(): Chunk[] {
    this.seal();
    this.pendingLines = 0;
    return this.parts.splice(0);
  }

  /** A chunk is written: its characters leave the queue and its buffer goes back to the pool. */
  release(chunk: Chunk): void {
    this.queuedChars -= chunk.chars;
    this.recycle(chunk);
  }

  /** A chunk's buffer goes back to the pool (its characters left the queue already: `forget`). */
  recycle(chunk: Chunk): void {
    if (chunk.pooled !== null && this.pool.length < POOL_SIZE) this.pool.push(chunk.pooled);
  }

  /** A chunk is lost: its characters leave the queue; its buffer is not reused (a writer may hold it). */
  forget(chunk: Chunk): void {
    this.queuedChars -= chunk.chars;
  }

  /** Drops every pending line (a close past its timeout). */
  clear(): void {
    this.parts.length = 0;
    this.current = null;
    this.currentBytes = 0;
    this.currentLines = 0;
    this.currentChars = 0;
    this.pendingLines = 0;
  }
}
