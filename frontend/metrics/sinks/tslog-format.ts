/**
 * TorchServe's metric log line, exactly:
 * `<TIMESTAMP> - NAME.UNIT:VALUE|#D1:V1,D2:V2|#hostname:H[,requestID:R],timestamp:EPOCH_S`.
 * TIMESTAMP is log4j's `%d{ISO8601}` shape in UTC (`2023-07-17T17:00:25,016`). Field text that
 * contains a separator or a control character is percent-encoded (only `%`, `|`, `,`, `:`, the
 * C0 controls and DEL), so a line is never corrupted and `decodeTslogField` restores the
 * original losslessly.
 */
import { decimalWithPoint } from '../number-format.js';

// The separators, and every C0 control character and DEL: a handler's NUL made grep call the
// log a binary file, and its ESC sequences reached the terminal of whoever tailed the log.
// eslint-disable-next-line no-control-regex -- the control characters are what is matched
const NEEDS_ESCAPE = /[%|,:\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- the control characters are what is matched
const ESCAPE_ALL = /[%|,:\u0000-\u001f\u007f]/g;
/** Exactly the codes `ESCAPE_ALL` writes, so any other `%` text (none: `%` is encoded) stays. */
const UNESCAPE_ALL = /%(25|7C|2C|3A|[01][0-9A-F]|7F)/g;

function percentEncode(c: string): string {
  const code = c.charCodeAt(0);
  return (code < 16 ? '%0' : '%') + code.toString(16).toUpperCase();
}

function percentDecode(_m: string, hex: string): string {
  return String.fromCharCode(parseInt(hex, 16));
}

/**
 * Percent-encode exactly `%`, `|`, `,`, `:`, the C0 controls (`\n`, `\r`, `\t`, NUL, ESC…) and
 * DEL (identity for ordinary text).
 */
export function encodeTslogField(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPE_ALL, percentEncode) : s;
}

/** Inverse of `encodeTslogField`. */
export function decodeTslogField(s: string): string {
  return s.indexOf('%') < 0 ? s : s.replace(UNESCAPE_ALL, percentDecode);
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
