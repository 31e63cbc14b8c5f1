/**
 * The StatsD sink's UDP socket, connected. On an unconnected socket (hot-shots' own UDP
 * transport) an agent that is not listening answers each datagram with an ICMP port unreachable
 * that nobody hears: every metric was lost with no sign. A connected socket gets each such ICMP
 * as an `ECONNREFUSED` 'error', which the sink counts and warns about like any failed send.
 *
 * It is the stream hot-shots' `stream` transport writes to (`write(message, callback)`, `on`,
 * `emit`, `destroy`): hot-shots appends a newline to each message, taken off again here so a
 * datagram is sent byte for byte as the packer built it. A host name is resolved when the socket
 * connects and again every `STATSD_DNS_TTL_MS` (a reconnect), as the cached lookup did; a failed
 * lookup fails every datagram until the next try (each one counted), tried again at most once
 * per `retryMs`. Datagrams written while the socket connects wait in a queue of at most
 * `MAX_PENDING_DATAGRAMS`; one more fails (counted).
 */
import dgram from 'node:dgram';
import { EventEmitter } from 'node:events';
import * as net from 'node:net';
import { STATSD_DNS_TTL_MS, cachedLookup4 } from './statsd-lookup.js';

/** Datagrams held while the socket connects (a lookup takes milliseconds; a stuck one fails the rest). */
export const MAX_PENDING_DATAGRAMS = 256;

/** Options of the connected socket. */
export interface ConnectedUdpOptions {
  /** Least time between two connect tries after a failed one (ms). */
  readonly retryMs: number;
  /** Clock (default Date.now). */
  readonly nowMs?: () => number;
}

type Callback = (err?: Error | null) => void;

/** A connected UDP socket to one StatsD agent, as a stream hot-shots writes to. */
export class ConnectedUdp extends EventEmitter {
  /** Read by hot-shots before each write. */
  destroyed = false;
  private socket: dgram.Socket | null = null;
  private state: 'idle' | 'connecting' | 'connected' | 'failed' = 'idle';
  private failure: Error | null = null;
  private triedAtMs = 0;
  private connectedAtMs = 0;
  private pending: { buf: Buffer; cb: Callback }[] = [];
  private readonly now: () => number;
  /** A name's IPv4 lookup, cached for its TTL (statsd-lookup.ts). */
  private readonly lookup = cachedLookup4();

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly opts: ConnectedUdpOptions,
  ) {
    super();
    this.now = opts.nowMs ?? Date.now;
  }

  /** Sends one message as one datagram (without the newline hot-shots appended). */
  write(message: string | Buffer, cb: Callback): boolean {
    const text = typeof message === 'string' ? message : message.toString();
    const buf = Buffer.from(text.endsWith('\n') ? text.slice(0, -1) : text);
    if (this.destroyed) {
      cb(new Error('statsd socket closed'));
      return false;
    }
    const now = this.now();
    // A name is looked up again after its TTL, as the cached lookup did: reconnect.
    if (this.state === 'connected' && net.isIP(this.host) === 0 && now - this.connectedAtMs >= STATSD_DNS_TTL_MS)
      this.reset();
    if (this.state === 'failed' && now - this.triedAtMs >= this.opts.retryMs) this.reset();
    if (this.state === 'idle') this.connect();
    if (this.state === 'connected') this.socket!.send(buf, (err) => cb(err));
    else if (this.state === 'failed') cb(this.failure);
    else if (this.pending.length < MAX_PENDING_DATAGRAMS) this.pending.push({ buf, cb });
    else cb(new Error(`more than ${MAX_PENDING_DATAGRAMS} datagrams waiting for the statsd socket to connect`));
    return true;
  }

  /** Closes the socket; datagrams still waiting fail. */
  destroy(): void {
    this.destroyed = true;
    this.reset();
    this.emit('close');
  }

  private connect(): void {
    this.state = 'connecting';
    this.triedAtMs = this.now();
    const socket =
      net.isIP(this.host) === 6
        ? dgram.createSocket('udp6')
        : dgram.createSocket({ type: 'udp4', lookup: this.lookup as dgram.SocketOptions['lookup'] });
    this.socket = socket;
    socket.unref();
    // ECONNREFUSED (an ICMP port unreachable for an earlier datagram) and any other socket error.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (socket !== this.socket || this.state !== 'connected') return;
      this.emit(
        'error',
        err.code === 'ECONNREFUSED'
          ? new Error(`nothing listens there: a datagram was refused (ICMP port unreachable, ${err.message})`)
          : err,
      );
    });
    socket.connect(this.port, this.host, (err?: Error) => {
      if (socket !== this.socket) return;
      const waiting = this.pending;
      this.pending = [];
      if (err !== undefined && err !== null) {
        this.state = 'failed';
        this.failure = err;
        for (const p of waiting) p.cb(err);
        return;
      }
      this.state = 'connected';
      this.connectedAtMs = this.now();
      for (const p of waiting) socket.send(p.buf, (e) => p.cb(e));
    });
  }

  /** Drops the socket (the next write connects a fresh one); datagrams waiting fail. */
  private reset(): void {
    const socket = this.socket;
    this.socket = null;
    this.state = 'idle';
    const waiting = this.pending;
    this.pending = [];
    for (const p of waiting) p.cb(new Error('statsd socket reconnecting'));
    if (socket !== null) {
      try {
        socket.close();
      } catch {
        // already closed
      }
    }
  }
}
