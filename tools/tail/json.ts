/** The JSON-lines form of a metric log line (`tsserve metrics tail --json`). */
import type { TailRecord } from './record.js';

/** One line of JSON: file, fields decoded, dimensions as an object in written order. */
export function jsonLine(r: TailRecord): string {
  const l = r.line;
  return (
    JSON.stringify({
      file: r.file,
      time: l.time,
      name: l.name,
      unit: l.unit,
      value: l.value,
      dimensions: Object.fromEntries(l.dimensions),
      hostname: l.hostname,
      requestId: l.requestId,
      timestamp: l.timestamp,
    }) + '\n'
  );
}
