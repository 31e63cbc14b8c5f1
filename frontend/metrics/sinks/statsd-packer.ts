/**
 * Packs StatsD lines into datagrams of at most `maxBytes` (newline-separated), sent when the
 * next line would not fit or on a short unref'd timer. Kept here rather than in hot-shots'
 * buffer, which re-measures its whole buffer (`Buffer.byteLength`) on every line: the byte
 * count is kept as a running sum, each line measured once.
 */

/** Datagram size for an agent on this host: what DogStatsD reads whole by default (`dogstatsd_buffer_size`). */
export const LOOPBACK_DATAGRAM_BYTES = 8192;
/** Datagram size across a network: under a typical 1500-byte MTU, so datagrams are not fragmented. */
export const NETWORK_DATAGRAM_BYTES = 1400;

/** True for an address that never leaves the host (no MTU to stay under). */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/** UTF-8 length of `s`, without encoding it when it is ASCII (every tsserve line but exotic tags). */
function utf8Bytes(s: string): number {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s);
  return s.length;
}

export class DatagramPacker {
  private pending = '';
  private bytes = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly maxBytes: number,
    private readonly flushMs: number,
    /** Sends one datagram; must not throw (the sink's send catches and counts). */
    private readonly out: (datagram: string) => void,
    /**
     * A line longer than LOOPBACK_DATAGRAM_BYTES is not sent but handed here: DogStatsD reads
     * 8192 bytes of a datagram and parses the cut-off rest as a malformed packet. (A line between
     * `maxBytes` and that goes alone: across a network it is fragmented, but read whole.) Required:
     * a line refused must be counted by the caller, never lost silently.
     */
    private readonly tooLong: (line: string, bytes: number) => void,
  ) {}

  add(line: string): void {
    const n = utf8Bytes(line);
    if (n > LOOPBACK_DATAGRAM_BYTES) {
      this.tooLong(line, n);
      return;
    }
    if (this.bytes > 0 && this.bytes + 1 + n > this.maxBytes) this.flush();
    if (this.bytes === 0) {
      this.pending = line;
      this.bytes = n;
    } else {
      this.pending += '\n' + line;
      this.bytes += 1 + n;
    }
    if (this.timer === null) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush();
      }, this.flushMs);
      this.timer.unref();
    }
  }

  /** Sends what is packed now. */
  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    if (this.bytes === 0) return;
    const d = this.pending;
    this.pending = '';
    this.bytes = 0;
    this.out(d);
  }
}
