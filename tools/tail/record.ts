/**
 * One metric log line as `tsserve metrics tail` handles it: which file it came from, the line
 * as parsed by the tslog sink's own parser, and its write time in epoch ms.
 */
import { parseTslogLine } from '../../frontend/metrics/sinks/tslog-format.js';
import type { TslogLine } from '../../frontend/metrics/sinks/tslog-format.js';

/** A parsed metric log line and where it came from. */
export interface TailRecord {
  /** `ts_metrics.log` or `model_metrics.log` (the base name, rotated copies included). */
  readonly file: string;
  readonly raw: string;
  readonly line: TslogLine;
  /** The leading log time in epoch ms. */
  readonly timeMs: number;
}

/** Epoch ms of a log4j ISO8601 UTC time (`2023-07-17T17:00:25,016`); NaN when malformed. */
export function logTimeMs(time: string): number {
  return Date.parse(time.replace(',', '.') + 'Z');
}

/** Parse one raw line of `file`; null when it is not a metric line. */
export function toRecord(file: string, raw: string): TailRecord | null {
  const line = parseTslogLine(raw.endsWith('\r') ? raw.slice(0, -1) : raw);
  if (line === null) return null;
  return { file, raw, line, timeMs: logTimeMs(line.time) };
}

/** The request ids a line carries: a batch's ids are joined with `,` inside requestID. */
export function requestIds(line: TslogLine): readonly string[] {
  return line.requestId === null ? [] : line.requestId.split(',');
}
