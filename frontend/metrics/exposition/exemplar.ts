/** Exemplars as OpenMetrics writes them: ` # {request_id="…",trace_id="…"} value timestamp`. */
import { escapeLabelValue, formatValue } from './escape.js';

/** The OpenMetrics limit on an exemplar's label set, in UTF-8 characters (names and values). */
export const EXEMPLAR_MAX_RUNES = 128;

const REQUEST_ID = 'request_id';
const TRACE_ID = 'trace_id';

function runes(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * The exemplar suffix of a sample line. Over the 128-character limit, a batch's joined request
 * ids are cut to the first one, then the trace id goes, then the request id is truncated.
 */
export function exemplarText(requestId: string, traceId: string | undefined, value: number, timeMs: number): string {
  let rid = requestId;
  let tid = traceId;
  const size = (): number => REQUEST_ID.length + runes(rid) + (tid === undefined ? 0 : TRACE_ID.length + runes(tid));
  if (size() > EXEMPLAR_MAX_RUNES) {
    const comma = rid.indexOf(',');
    if (comma > 0) rid = rid.slice(0, comma);
  }
  if (size() > EXEMPLAR_MAX_RUNES) tid = undefined;
  if (size() > EXEMPLAR_MAX_RUNES) rid = [...rid].slice(0, EXEMPLAR_MAX_RUNES - REQUEST_ID.length).join('');
  const labels =
    tid === undefined
      ? `${REQUEST_ID}="${escapeLabelValue(rid)}"`
      : `${REQUEST_ID}="${escapeLabelValue(rid)}",${TRACE_ID}="${escapeLabelValue(tid)}"`;
  return ` # {${labels}} ${formatValue(value)} ${formatTimestamp(timeMs)}`;
}

/** Epoch milliseconds as OpenMetrics seconds (`1689613225.016`). */
function formatTimestamp(timeMs: number): string {
  return formatValue(timeMs / 1000);
}
