/**
 * TorchServe's metric log line, exactly:
 * `<TIMESTAMP> - NAME.UNIT:VALUE|#D1:V1,D2:V2|#hostname:H[,requestID:R],timestamp:EPOCH_S`.
 * TIMESTAMP is log4j's `%d{ISO8601}` shape in UTC (`2023-07-17T17:00:25,016`). Field text that
 * contains a separator is percent-encoded (only `%`, `|`, `,`, `:`, `\n`, `\r`), so a line is
 * never corrupted and `decodeTslogField` restores the original losslessly.
 */
import { decimalWithPoint } from '../number-format.js';

const NEEDS_ESCAPE = /[%|,:\n\r]/;
const ESCAPE_ALL = /[%|,:\n\r]/g;
const ESCAPES: Readonly<Record<string, string>> = {
  '%': '%25',
  '|': '%7C',
  ',': '%2C',
  ':': '%3A',
  '\n': '%0A',
  '\r': '%0D',
};
const UNESCAPE_ALL = /%(25|7C|2C|3A|0A|0D)/g;
const UNESCAPES: Readonly<Record<string, string>> = {
  '25': '%',
  '7C': '|',
  '2C': ',',
  '3A': ':',
  '0A': '\n',
  '0D': '\r',
};

/** Percent-encode exactly `%`, `|`, `,`, `:`, `\n`, `\r` (identity for ordinary text). */
export function encodeTslogField(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPE_ALL, (c) => ESCAPES[c] as string) : s;
}

/** Inverse of `encodeTslogField`. */
export function decodeTslogField(s: string): string {
  return s.indexOf('%') < 0 ? s : s.replace(UNESCAPE_ALL, (_m, hex: string) => UNESCAPES[hex] as string);
}

/** A metric value as TorchServe prints it: always a decimal point, never an exponent. */
export const formatTslogValue = decimalWithPoint;

let cachedSecond = Number.NaN;
let cachedPrefix = '';

/** `2023-07-17T17:00:25,016` (UTC) for epoch ms; the per-second part is cached. */
export function formatTslogTimestamp(ms: number): string {
  const whole = Math.floor(ms);
  const second = Math.floor(whole / 1000);
  if (second !== cachedSecond) {
    cachedPrefix = new Date(second * 1000).toISOString().slice(0, 19) + ',';
    cachedSecond = second;
  }
  const milli = whole - second * 1000;
  return cachedPrefix + (milli < 10 ? '00' : milli < 100 ? '0' : '') + milli;
}

/** A tslog line split into its fields, decoded. */
export interface TslogLine {
  /** The leading `2023-07-17T17:00:25,016` (UTC). */
  readonly time: string;
  readonly name: string;
  readonly unit: string;
  readonly value: number;
  /** The value text as written (e.g. `1.0`). */
  readonly valueText: string;
  /** Dimensions in written order, as [name, value]. */
  readonly dimensions: readonly (readonly [string, string])[];
  readonly hostname: string;
  readonly requestId: string | null;
  /** Epoch seconds of the datapoint. */
  readonly timestamp: number;
}

const LINE =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2},\d{3}) - ([^.:|,\s]+)\.([^:|,\n\r]+):(-?\d+\.\d+)\|#([^|]*)\|#hostname:([^|,:]*)(?:,requestID:([^|,:]*))?,timestamp:(\d+)$/;
const DIM = /^([^:,|]+):([^:,|]*)$/;

/** Parse one line (without its newline) against the grammar; null when it does not match. */
export function parseTslogLine(line: string): TslogLine | null {
  const m = LINE.exec(line);
  if (m === null) return null;
  const dimText = m[5] as string;
  const dimensions: (readonly [string, string])[] = [];
  if (dimText.length > 0) {
    for (const part of dimText.split(',')) {
      const d = DIM.exec(part);
      if (d === null) return null;
      dimensions.push([decodeTslogField(d[1] as string), decodeTslogField(d[2] as string)]);
    }
  }
  return {
    time: m[1] as string,
    name: decodeTslogField(m[2] as string),
    unit: decodeTslogField(m[3] as string),
    value: Number(m[4]),
    valueText: m[4] as string,
    dimensions,
    hostname: decodeTslogField(m[6] as string),
    requestId: m[7] === undefined ? null : decodeTslogField(m[7]),
    timestamp: Number(m[8]),
  };
}
