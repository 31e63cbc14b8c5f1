/**
 * Splits a worker's stdout or stderr into log lines, each at most `maxChars` long. A handler's
 * output is not ours to bound: a `console.log` of a tensor is one line of tens of megabytes, and
 * progress written with `\r` and no `\n` is one line for the life of the worker. Unbounded, the
 * frontend held all of it (for ever, in the second case) and wrote it as one log record. Past
 * the bound a line keeps its first `maxChars` characters, then says how many it dropped.
 */

/** Longest worker log line kept, in characters (64 KiB of ASCII). */
export const MAX_WORKER_LINE_CHARS = 64 * 1024;

/** Feeds chunks in, calls `emit` once per line (without its `\n`) with the characters cut from it (0 for most). */
export class LineSplitter {
  private kept: string[] = [];
  private keptChars = 0;
  private dropped = 0;

  constructor(
    private readonly emit: (line: string, droppedChars: number) => void,
    private readonly maxChars = MAX_WORKER_LINE_CHARS,
  ) {}

  /** Takes one chunk; emits every line it completes. */
  push(chunk: string): void {
    let start = 0;
    for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
      this.append(chunk, start, nl);
      this.flush();
      start = nl + 1;
    }
    this.append(chunk, start, chunk.length);
  }

  /** The stream ended: emits the last line if it had no `\n`. */
  end(): void {
    if (this.keptChars > 0 || this.dropped > 0) this.flush();
  }

  /** Keeps `chunk[from, to)` up to the bound, counts the rest as dropped (no copy of it). */
  private append(chunk: string, from: number, to: number): void {
    // keptChars never passes maxChars, so take is never negative.
    const take = Math.min(this.maxChars - this.keptChars, to - from);
    if (take > 0) {
      this.kept.push(chunk.slice(from, from + take));
      this.keptChars += take;
    }
    this.dropped += to - from - take;
  }

  private flush(): void {
    const line = this.kept.join('');
    this.emit(
      this.dropped > 0
        ? `${line}… (${this.dropped} more characters dropped: a worker log line is kept to ${this.maxChars})`
        : line,
      this.dropped,
    );
    this.kept = [];
    this.keptChars = 0;
    this.dropped = 0;
  }
}
