/**
 * The `tslog` sink: TorchServe's StatsD-like lines in `<logDir>/ts_metrics.log` (section
 * `ts_metrics`) and `<logDir>/model_metrics.log` (section `model_metrics`). Counters write the
 * increment of each record, gauges the value, histograms the observation (StatsD semantics).
 * A record formats one line and queues it; the files are written asynchronously and rotated by
 * size (frontend/log/rotating-file.ts, the writer every log file of the server shares).
 * The sink never logs its own lost-line count (`ownErrorMetric{sink="tslog"}`): lines about a
 * failing file would go to that file, fail and be counted again, forever.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricSpec } from '../../../schema/types.js';
import type { BoundAutoLabels } from '../../../schema/auto-labels.js';
import type { MetricsLog, Sink, SinkChild, SinkMetric } from './sink.js';
import { NOOP_CHILD } from './sink.js';
import { RotatingFile } from '../../log/rotating-file.js';
import { encodeTslogField, formatTslogTimestamp, formatTslogValue } from './tslog-format.js';

/** Settings of the tslog sink. */
export interface TslogSinkOptions {
  readonly logDir: string;
  readonly nowMs: () => number;
  readonly log: MetricsLog;
  readonly maxBytes: number;
  readonly keep: number;
  /** Longest wait of a queued line before it is written, in ms (default 200). */
  readonly flushMs?: number;
  /** Most characters queued per file (default TSLOG_MAX_QUEUE_CHARS, 32 Mi); lines beyond it are dropped and counted. */
  readonly maxQueueChars?: number;
  /** Called with the number of lines lost (queue full, a failed open or write). */
  readonly onLost?: (lines: number) => void;
  /** Called with the file's name (`ts_metrics.log`) for every rotation that failed. */
  readonly onRotateFailed?: (file: string) => void;
  /** The metric `onRotateFailed` feeds, named in the warning (with `file` and `reason="rotation_failed"`). */
  readonly logErrorMetric?: string;
  /** The metric `onLost` feeds: its `sink="tslog"` series is not written here. */
  readonly ownErrorMetric?: string;
  /** Least time between two lost-line warnings in ms (default 60000). */
  readonly rewarnMs?: number;
  /** Upper bound on `close()` in ms (default 2000). */
  readonly closeTimeoutMs?: number;
}

/**
 * Default cap of each file's queue, in characters (about 32 MiB of ASCII lines): room for three
 * full worker flushes (maxPointsPerFlush 65 536 points × about 160 characters a line) arriving
 * back to back, so a burst the ingest delivers in one tick is never cut (the former 4 Mi cap
 * lost lines of a single 25 000-point flush under load).
 */
export const TSLOG_MAX_QUEUE_CHARS = 32 * 1024 * 1024;

/** Characters queued before a chunk is written without waiting for the timer. */
const CHUNK_CHARS = 64 * 1024;

class TslogChild implements SinkChild {
  constructor(
    private readonly file: RotatingFile,
    private readonly nowMs: () => number,
    /** ` - NAME.UNIT:` */
    private readonly head: string,
    /** `|#D1:V1,...,A1:X1,...|#hostname:H` (declared dimensions, then automatic labels but the hostname) */
    private readonly tail: string,
  ) {}

  record(value: number, requestId: string | undefined, timeMs: number | undefined): void {
    const now = this.nowMs();
    const at = timeMs === undefined ? now : timeMs;
    const rid = requestId === undefined ? '' : ',requestID:' + encodeTslogField(requestId);
    this.file.append(
      formatTslogTimestamp(now) +
        this.head +
        formatTslogValue(value) +
        this.tail +
        rid +
        ',timestamp:' +
        Math.floor(at / 1000) +
        '\n',
    );
  }
}

class TslogMetric implements SinkMetric {
  private readonly head: string;

  constructor(
    private readonly spec: MetricSpec,
    private readonly file: RotatingFile,
    private readonly opts: TslogSinkOptions,
  ) {
    this.head = ' - ' + encodeTslogField(spec.name) + '.' + encodeTslogField(spec.unit) + ':';
  }

  bind(values: readonly string[], auto: BoundAutoLabels): SinkChild {
    let dims = '';
    const names = this.spec.dimensions;
    for (let i = 0; i < names.length; i++) {
      if (auto.omitted.includes(i)) continue;
      if (dims !== '') dims += ',';
      dims += encodeTslogField(names[i] as string) + ':' + encodeTslogField(values[i] as string);
    }
    // TorchServe prints the host in a segment of its own, for every metric; the other automatic labels go with the dimensions.
    for (let i = 0; i < auto.names.length; i++) {
      if (auto.isHostname[i] === true) continue;
      if (dims !== '') dims += ',';
      dims += encodeTslogField(auto.names[i] as string) + ':' + encodeTslogField(auto.values[i] as string);
    }
    return new TslogChild(
      this.file,
      this.opts.nowMs,
      this.head,
      '|#' + dims + '|#hostname:' + encodeTslogField(auto.hostname),
    );
  }
}

/** Writes TorchServe-format metric lines to the two metric log files. */
export class TslogSink implements Sink {
  readonly mode = 'tslog' as const;
  private readonly tsFile: RotatingFile;
  private readonly modelFile: RotatingFile;

  constructor(private readonly opts: TslogSinkOptions) {
    try {
      fs.mkdirSync(opts.logDir, { recursive: true });
    } catch (err) {
      opts.log('error', `metrics log dir ${opts.logDir}: ${String(err)}`);
    }
    const fileOpts = {
      label: 'metrics log',
      maxBytes: opts.maxBytes,
      keep: opts.keep,
      flushMs: opts.flushMs ?? 200,
      chunkChars: CHUNK_CHARS,
      maxQueueChars: opts.maxQueueChars ?? TSLOG_MAX_QUEUE_CHARS,
      log: opts.log,
      ...(opts.onLost !== undefined ? { onLost: opts.onLost } : {}),
      ...(opts.ownErrorMetric !== undefined ? { countedIn: `${opts.ownErrorMetric}{sink="tslog"}` } : {}),
      ...(opts.rewarnMs !== undefined ? { rewarnMs: opts.rewarnMs } : {}),
      ...(opts.closeTimeoutMs !== undefined ? { closeTimeoutMs: opts.closeTimeoutMs } : {}),
      nowMs: opts.nowMs,
    };
    const file = (name: string): RotatingFile =>
      new RotatingFile(path.join(opts.logDir, name), {
        ...fileOpts,
        ...(opts.onRotateFailed !== undefined ? { onRotateFailed: () => opts.onRotateFailed?.(name) } : {}),
        ...(opts.logErrorMetric !== undefined
          ? { rotationCountedIn: `${opts.logErrorMetric}{file="${name}",reason="rotation_failed"}` }
          : {}),
      });
    this.tsFile = file('ts_metrics.log');
    this.modelFile = file('model_metrics.log');
  }

  metric(spec: MetricSpec): SinkMetric {
    const file = spec.section === 'ts_metrics' ? this.tsFile : this.modelFile;
    const m = new TslogMetric(spec, file, this.opts);
    const sinkAt = spec.dimensions.indexOf('sink');
    if (spec.name !== this.opts.ownErrorMetric || sinkAt < 0) return m;
    return { bind: (values, auto) => (values[sinkAt] === 'tslog' ? NOOP_CHILD : m.bind(values, auto)) };
  }

  /** Resolves when every line recorded so far is written (or counted lost). */
  async flush(): Promise<void> {
    await Promise.all([this.tsFile.flush(), this.modelFile.flush()]);
  }

  /** Write out the queues and close both files, within the close bound; never rejects. */
  async close(): Promise<void> {
    await Promise.all([this.tsFile.close(), this.modelFile.close()]);
  }
}
