/**
 * The `tslog` sink: TorchServe's StatsD-like lines in `<logDir>/ts_metrics.log` (section
 * `ts_metrics`) and `<logDir>/model_metrics.log` (section `model_metrics`). Counters write the
 * increment of each record, gauges the value, histograms the observation (StatsD semantics).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { MetricSpec } from '../../../schema/types.js';
import type { MetricsLog, Sink, SinkChild, SinkMetric } from './sink.js';
import { TslogFile } from './tslog-file.js';
import { encodeTslogField, formatTslogTimestamp, formatTslogValue } from './tslog-format.js';

/** Settings of the tslog sink. */
export interface TslogSinkOptions {
  readonly logDir: string;
  readonly hostname: string;
  readonly nowMs: () => number;
  readonly log: MetricsLog;
  readonly maxBytes: number;
  readonly keep: number;
  /** Buffer flush period in ms (default 200). */
  readonly flushMs?: number;
}

class TslogChild implements SinkChild {
  constructor(
    private readonly file: TslogFile,
    private readonly nowMs: () => number,
    /** ` - NAME.UNIT:` */
    private readonly head: string,
    /** `|#D1:V1,...|#hostname:H` */
    private readonly tail: string,
  ) {}

  record(value: number, requestId: string | undefined, timeMs: number | undefined): void {
    const now = this.nowMs();
    const at = timeMs === undefined ? now : timeMs;
    const rid = requestId === undefined ? '' : ',requestID:' + encodeTslogField(requestId);
    this.file.append(
      formatTslogTimestamp(now) + this.head + formatTslogValue(value) + this.tail + rid +
        ',timestamp:' + Math.floor(at / 1000) + '\n',
    );
  }
}

class TslogMetric implements SinkMetric {
  private readonly head: string;

  constructor(
    private readonly spec: MetricSpec,
    private readonly file: TslogFile,
    private readonly opts: TslogSinkOptions,
    private readonly hostSegment: string,
  ) {
    this.head = ' - ' + encodeTslogField(spec.name) + '.' + encodeTslogField(spec.unit) + ':';
  }

  bind(values: readonly string[]): SinkChild {
    let dims = '';
    const names = this.spec.dimensions;
    for (let i = 0; i < names.length; i++) {
      if (i > 0) dims += ',';
      dims += encodeTslogField(names[i] as string) + ':' + encodeTslogField(values[i] as string);
    }
    return new TslogChild(this.file, this.opts.nowMs, this.head, '|#' + dims + this.hostSegment);
  }
}

/** Writes TorchServe-format metric lines to the two metric log files. */
export class TslogSink implements Sink {
  readonly mode = 'tslog' as const;
  private readonly tsFile: TslogFile;
  private readonly modelFile: TslogFile;
  private readonly hostSegment: string;

  constructor(private readonly opts: TslogSinkOptions) {
    try {
      fs.mkdirSync(opts.logDir, { recursive: true });
    } catch (err) {
      opts.log('error', `metrics log dir ${opts.logDir}: ${String(err)}`);
    }
    const fileOpts = {
      maxBytes: opts.maxBytes,
      keep: opts.keep,
      flushMs: opts.flushMs ?? 200,
      maxBufferChars: 1 << 20,
      log: opts.log,
    };
    this.tsFile = new TslogFile(path.join(opts.logDir, 'ts_metrics.log'), fileOpts);
    this.modelFile = new TslogFile(path.join(opts.logDir, 'model_metrics.log'), fileOpts);
    this.hostSegment = '|#hostname:' + encodeTslogField(opts.hostname);
  }

  metric(spec: MetricSpec): SinkMetric {
    const file = spec.section === 'ts_metrics' ? this.tsFile : this.modelFile;
    return new TslogMetric(spec, file, this.opts, this.hostSegment);
  }

  /** Write out buffered lines now (tests and shutdown). */
  flush(): void {
    this.tsFile.flush();
    this.modelFile.flush();
  }

  async close(): Promise<void> {
    this.tsFile.close();
    this.modelFile.close();
  }
}
