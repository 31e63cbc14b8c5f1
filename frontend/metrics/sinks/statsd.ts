/**
 * The `statsd` sink — the only file that imports hot-shots. Each series pre-builds its wire
 * name and tags at bind time. A histogram record is one string concatenation; counters and
 * gauges are aggregated per series for one flush interval (a sum, a last level) and sent as one
 * line each. Lines are packed into datagrams here (statsd-packer.ts: 8 KiB to an agent on this
 * host, 1400 bytes across a network), each handed to hot-shots unbuffered, for its socket.
 * Sends never throw: socket errors go to an `errorHandler` that counts every one
 * (`onSendError`) and warns at most once per `rewarnMs`, so a later outage is heard too.
 * The StatsD type and the unit scale of each metric are decided once, when it is built
 * (`statsdWireType`): a histogram is a timer (`ms`) only when its unit is a time unit.
 */
import type { Writable } from 'node:stream';
import StatsDClient from 'hot-shots';
import type { StatsD } from 'hot-shots';
import type { MetricSpec, StatsdConfig, StatsdHistogramType, StatsdTagStyle } from '../../../schema/types.js';
import type { BoundAutoLabels } from '../../../schema/auto-labels.js';
import { unitKind } from '../../../schema/config/units.js';
import type { MetricsLog, Sink, SinkChild, SinkMetric } from './sink.js';
import { NOOP_SINK_METRIC } from './sink.js';
import { plainNumber } from '../number-format.js';
import { DatagramPacker, isLoopbackHost, LOOPBACK_DATAGRAM_BYTES, NETWORK_DATAGRAM_BYTES } from './statsd-packer.js';
import { ConnectedUdp } from './statsd-udp.js';

/** Settings of the statsd sink. */
export interface StatsdSinkOptions {
  readonly config: StatsdConfig;
  readonly log: MetricsLog;
  /** Buffer flush period in ms (default 100). */
  readonly flushMs?: number;
  /** Upper bound on `close()` in ms (default 2000). */
  readonly closeTimeoutMs?: number;
  /** Called once per failed send (a datagram, or a socket error). */
  readonly onSendError?: () => void;
  /** The metric `onSendError` feeds: not sent here, or a failing agent would keep feeding it. */
  readonly ownErrorMetric?: string;
  /** Least time between two send-error warnings in ms (default 60000). */
  readonly rewarnMs?: number;
  /** Clock for the warning interval (default Date.now). */
  readonly nowMs?: () => number;
}

/** Default least time between two send-error warnings (ms). */
export const STATSD_REWARN_MS = 60_000;

/**
 * Characters that would break a tag, replaced by `_` (as hot-shots' own sanitizer does), and
 * every C0 control and DEL: StatsD has no escaping, and a handler's NUL, tab or ESC went into
 * the datagram as is.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what is matched
const DATADOG_TAG_UNSAFE = /[|,@:#\u0000-\u001f\u007f]/g;
// eslint-disable-next-line no-control-regex -- the control characters are what is matched
const TELEGRAF_TAG_UNSAFE = /[|,:=\s\u0000-\u001f\u007f]/g;

/** Make a tag key or value safe for `style` (lossy: StatsD has no escaping). */
export function sanitizeStatsdTag(s: string, style: StatsdTagStyle): string {
  return s.replace(style === 'telegraf' ? TELEGRAF_TAG_UNSAFE : DATADOG_TAG_UNSAFE, '_');
}

/** Characters a StatsD metric name cannot carry (line grammar `name:value|type|@rate|#tags`), controls included. */
// eslint-disable-next-line no-control-regex -- the control characters are what is matched
const NAME_UNSAFE = /[:|@#,\s\u0000-\u001f\u007f]/g;

/**
 * Make `prefix + name` safe as a StatsD metric name: `:` (valid in Prometheus names), `|`, `@`,
 * `#`, `,`, whitespace and control characters become `_` (lossy, as for tags: StatsD has no escaping).
 */
export function sanitizeStatsdName(s: string): string {
  return s.replace(NAME_UNSAFE, '_');
}

/** How one metric goes on the wire: its StatsD type and the power of ten the value is scaled by. */
export interface StatsdWireType {
  readonly code: 'c' | 'g' | 'ms' | 'h' | 'd';
  /**
   * Decimal places the value's point moves (3: s → ms, -3: µs → ms), in its text: 0.0041 s is
   * `4.1`, where 0.0041 * 1000 is 4.1000000000000005 and 7 * 0.001 is 0.007000000000000001.
   */
  readonly shift: number;
}

const COUNTER: StatsdWireType = Object.freeze({ code: 'c', shift: 0 });
const GAUGE: StatsdWireType = Object.freeze({ code: 'g', shift: 0 });
const TIMER_MS: StatsdWireType = Object.freeze({ code: 'ms', shift: 0 });
const TIMER_FROM_S: StatsdWireType = Object.freeze({ code: 'ms', shift: 3 });
const TIMER_FROM_US: StatsdWireType = Object.freeze({ code: 'ms', shift: -3 });
const HISTOGRAM: StatsdWireType = Object.freeze({ code: 'h', shift: 0 });
const DISTRIBUTION: StatsdWireType = Object.freeze({ code: 'd', shift: 0 });

/**
 * The wire type of a metric: counters `c`, gauges `g` (value as is, like TorchServe), time
 * histograms `ms` scaled to milliseconds (seconds ×1000, microseconds ÷1000), and every other
 * histogram `histogramType` — `h` when that is `ms`, because a timer reads its value as ms.
 */
export function statsdWireType(spec: MetricSpec, histogramType: StatsdHistogramType): StatsdWireType {
  if (spec.type === 'counter') return COUNTER;
  if (spec.type === 'gauge') return GAUGE;
  switch (unitKind(spec.unit)) {
    case 'milliseconds':
      return TIMER_MS;
    case 'seconds':
      return TIMER_FROM_S;
    case 'microseconds':
      return TIMER_FROM_US;
    default:
      return histogramType === 'd' ? DISTRIBUTION : HISTOGRAM;
  }
}

type Send = (line: string) => void;

/** A histogram series: every observation goes out as it comes (the agent computes the stats). */
class StatsdChild implements SinkChild {
  constructor(
    private readonly send: Send,
    /** `prefix.name[,k=v...]:` */
    private readonly head: string,
    /** `|ms[|#k:v,...]` */
    private readonly tail: string,
    /** Decimal shift to the wire type's unit (0 unless a time histogram not in ms). */
    private readonly shift: number,
  ) {}

  record(value: number): void {
    this.send(this.head + plainNumber(value, this.shift) + this.tail);
  }
}

/**
 * A counter or gauge series, aggregated in the client until the next flush (datagram count
 * falls from one per record to one per series per interval): a counter sends the sum of its
 * increments, a gauge its last level — what the agent would have made of the separate lines,
 * as datadog-go's client-side aggregation does. The first record of an interval queues the
 * series on its sink's dirty list; the flush drains it.
 */
class AggregatedChild implements SinkChild {
  private pending = 0;
  private queued = false;

  constructor(
    private readonly dirty: DirtyList,
    private readonly head: string,
    private readonly tail: string,
    private readonly gauge: boolean,
    /** Etsy/Telegraf read a signed gauge as a delta: set 0 first to send a negative level. */
    private readonly zeroBeforeNegative: boolean,
  ) {}

  record(value: number): void {
    this.pending = this.gauge ? value : this.pending + value;
    if (!this.queued) {
      this.queued = true;
      this.dirty.add(this);
    }
  }

  /** Send the interval's line and reset. */
  drain(send: Send): void {
    const v = this.pending;
    this.pending = 0;
    this.queued = false;
    if (this.zeroBeforeNegative && v < 0) send(this.head + '0' + this.tail);
    send(this.head + plainNumber(v) + this.tail);
  }
}

/** The series with a value waiting, drained on a short unref'd timer and at close. */
class DirtyList {
  private list: AggregatedChild[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** After close, nothing waits: each record is sent (and fails, counted) at once. */
  private closed = false;

  constructor(
    private readonly send: Send,
    private readonly flushMs: number,
  ) {}

  add(child: AggregatedChild): void {
    if (this.closed) {
      child.drain(this.send);
      return;
    }
    this.list.push(child);
    if (this.timer === null) {
      this.timer = setTimeout(() => this.drain(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Send every waiting series' line now; with `close`, every later record goes out at once. */
  drain(close = false): void {
    if (close) this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const list = this.list;
    this.list = [];
    for (let i = 0; i < list.length; i++) (list[i] as AggregatedChild).drain(this.send);
  }
}

class StatsdMetric implements SinkMetric {
  private readonly wire: StatsdWireType;
  /** The wire name, sanitized once for every series of the metric. */
  readonly wireName: string;

  constructor(
    private readonly spec: MetricSpec,
    private readonly send: Send,
    private readonly dirty: DirtyList,
    private readonly config: StatsdConfig,
  ) {
    this.wire = statsdWireType(spec, config.histogramType);
    this.wireName = sanitizeStatsdName(config.prefix + spec.name);
  }

  bind(values: readonly string[], auto: BoundAutoLabels): SinkChild {
    const style = this.config.tagStyle;
    const tags: string[] = [];
    if (style !== 'none') {
      const names = this.spec.dimensions;
      const sep = style === 'telegraf' ? '=' : ':';
      for (let i = 0; i < names.length; i++) {
        if (auto.omitted.includes(i)) continue;
        tags.push(sanitizeStatsdTag(names[i] as string, style) + sep + sanitizeStatsdTag(values[i] as string, style));
      }
      for (let i = 0; i < auto.names.length; i++) {
        tags.push(
          sanitizeStatsdTag(auto.names[i] as string, style) + sep + sanitizeStatsdTag(auto.values[i] as string, style),
        );
      }
    }
    const name = this.wireName;
    const head = style === 'telegraf' && tags.length > 0 ? `${name},${tags.join(',')}:` : `${name}:`;
    const code = this.wire.code;
    const tail = style === 'datadog' && tags.length > 0 ? `|${code}|#${tags.join(',')}` : `|${code}`;
    if (this.spec.type === 'histogram') return new StatsdChild(this.send, head, tail, this.wire.shift);
    const gauge = this.spec.type === 'gauge';
    return new AggregatedChild(this.dirty, head, tail, gauge, gauge && style !== 'datadog');
  }
}

/** Pushes every datapoint to a StatsD / DogStatsD agent over UDP. */
export class StatsdSink implements Sink {
  readonly mode = 'statsd' as const;
  private readonly client: StatsD;
  private readonly send: Send;
  /** Counter and gauge series with a value waiting for the next flush. */
  private readonly dirty: DirtyList;
  /** When the last send-error warning was logged (null: never). */
  private warnedAtMs: number | null = null;
  /** Send errors since that warning (the one it reported included). */
  private errorsSinceWarning = 0;
  private closing: Promise<void> | null = null;
  private readonly packer: DatagramPacker;
  /** Metric names by the name they are sent under, to warn when two share one. */
  private readonly wireNames = new Map<string, string>();

  constructor(private readonly opts: StatsdSinkOptions) {
    this.client = new StatsDClient({
      host: opts.config.host,
      port: opts.config.port,
      maxBufferSize: 0, // datagrams come packed (DatagramPacker): hot-shots sends each as is
      includeDataDogTags: false,
      // A connected socket (statsd-udp.ts): an agent not listening is heard (ICMP port
      // unreachable) and counted; a host name is resolved once a minute, not for every datagram.
      protocol: 'stream',
      stream: new ConnectedUdp(opts.config.host, opts.config.port, {
        retryMs: opts.rewarnMs ?? STATSD_REWARN_MS,
        ...(opts.nowMs !== undefined ? { nowMs: opts.nowMs } : {}),
      }) as unknown as Writable,
      errorHandler: (err: Error): void => this.sendFailed(err),
    });
    // hot-shots' typed helpers format the value with `${value}` (scientific for 1e21) and
    // sanitize tags their own way, so lines are built here, packed, and each datagram handed
    // to its untyped `send(message, tags)`, which appends global tags (none) and sends.
    const client = this.client as unknown as { send(message: string, tags: undefined): void };
    const flushMs = opts.flushMs ?? 100;
    const size = isLoopbackHost(opts.config.host) ? LOOPBACK_DATAGRAM_BYTES : NETWORK_DATAGRAM_BYTES;
    this.packer = new DatagramPacker(
      size,
      flushMs,
      (datagram) => {
        try {
          client.send(datagram, undefined);
        } catch (err) {
          this.sendFailed(err instanceof Error ? err : new Error(String(err)));
        }
      },
      (line, bytes) => {
        const head = line.length > 60 ? `${line.slice(0, 60)}…` : line;
        this.sendFailed(
          new Error(
            `a line of ${bytes} bytes (${head}) was not sent: it is longer than the ${LOOPBACK_DATAGRAM_BYTES} bytes a StatsD agent reads in one datagram (DogStatsD's dogstatsd_buffer_size)`,
          ),
        );
      },
    );
    this.send = (line: string): void => this.packer.add(line);
    this.dirty = new DirtyList(this.send, flushMs);
  }

  metric(spec: MetricSpec): SinkMetric {
    if (spec.name === this.opts.ownErrorMetric) return NOOP_SINK_METRIC;
    const m = new StatsdMetric(spec, this.send, this.dirty, this.opts.config);
    const other = this.wireNames.get(m.wireName);
    // StatsD has no escaping: `job:rate` and `job_rate` both go as `job_rate`, and the agent adds them up.
    if (other === undefined) this.wireNames.set(m.wireName, spec.name);
    else
      this.opts.log(
        'warn',
        `statsd: ${spec.name} and ${other} are both sent as ${m.wireName} (StatsD names cannot carry : | @ # , or spaces), so the agent mixes their datapoints; rename one`,
      );
    return m;
  }

  /**
   * Counts every failed send; warns on the first and then at most once per `rewarnMs`, with
   * how many failed in between (a streak-once warning would keep a later outage silent).
   */
  private sendFailed(err: Error): void {
    try {
      this.opts.onSendError?.();
    } catch {
      // counting must not turn a send error into a thrown one
    }
    this.errorsSinceWarning++;
    const now = (this.opts.nowMs ?? Date.now)();
    const where = `statsd ${this.opts.config.host}:${this.opts.config.port}`;
    if (this.warnedAtMs === null) {
      this.opts.log(
        'warn',
        `${where}: ${err.message}; every failed send is counted in ${this.opts.ownErrorMetric ?? 'the sink errors'}{sink="statsd"}, and this warning repeats at most once every ${Math.round((this.opts.rewarnMs ?? STATSD_REWARN_MS) / 1000)} s while sends fail`,
      );
    } else if (now - this.warnedAtMs >= (this.opts.rewarnMs ?? STATSD_REWARN_MS)) {
      this.opts.log(
        'warn',
        `${where}: ${this.errorsSinceWarning} sends failed since the last warning, latest: ${err.message}`,
      );
    } else {
      return;
    }
    this.warnedAtMs = now;
    this.errorsSinceWarning = 0;
  }

  /** Flush hot-shots' buffer and close its socket, waiting at most `closeTimeoutMs`. */
  close(): Promise<void> {
    this.dirty.drain(true);
    this.packer.flush(); // lines recorded after an earlier close go out (and fail, counted) now
    if (this.closing !== null) return this.closing;
    const bound = this.opts.closeTimeoutMs ?? 2000;
    this.closing = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, bound);
      timer.unref();
      try {
        this.client.close(() => {
          clearTimeout(timer);
          resolve();
        });
      } catch (err) {
        this.opts.log('warn', `statsd close: ${String(err)}`);
        clearTimeout(timer);
        resolve();
      }
    });
    return this.closing;
  }
}
