/**
 * One access_log.log line, written field by field: exactly the bytes of
 * `JSON.stringify({ time, ...record }) + '\n'` for an `AccessRecord`, without building the
 * spread object or walking it: the line is formatted on every response, so on the request's
 * path (docs/benchmarks.md, "Frontend cost per request", has what the change saved).
 */
import type { AccessRecord } from './log.js';

/** A number as JSON.stringify writes it (`null` for NaN and ±Infinity). */
function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

let lastMs = Number.NaN;
let lastIso = '';

/** `new Date(ms).toISOString()`, remembered for the last `ms` (many responses share a millisecond). */
function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** The access line of `r` at epoch ms `nowMs`, newline included. */
export function accessLine(nowMs: number, r: AccessRecord): string {
  return (
    '{"time":"' +
    isoTime(nowMs) +
    '","listener":' +
    JSON.stringify(r.listener) +
    ',"port":' +
    jsonNumber(r.port) +
    ',"method":' +
    JSON.stringify(r.method) +
    ',"path":' +
    JSON.stringify(r.path) +
    ',"status":' +
    jsonNumber(r.status) +
    ',"durationMs":' +
    jsonNumber(r.durationMs) +
    ',"bytes":' +
    jsonNumber(r.bytes) +
    ',"requestId":' +
    JSON.stringify(r.requestId) +
    '}\n'
  );
}
