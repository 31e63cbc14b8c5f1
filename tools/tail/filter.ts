/**
 * The selection of `tsserve metrics tail`: by metric name, model, dimension, request id and
 * start time, checked once when the flags are read and then applied as one predicate.
 */
import type { TailRecord } from './record.js';
import { logTimeMs, requestIds } from './record.js';

/** The dimensions that name a model (TorchServe's handler metrics and the frontend/LLM ones). */
export const MODEL_DIMENSIONS: readonly string[] = ['ModelName', 'model_name'];

/** What to keep; an empty list or null keeps everything. */
export interface TailSelection {
  readonly metrics: readonly string[];
  readonly model: string | null;
  /** Dimension name and exact value, all required. */
  readonly dims: readonly (readonly [string, string])[];
  readonly request: string | null;
  /** Keep lines written at or after this epoch ms. */
  readonly sinceMs: number | null;
}

const RELATIVE = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `--since`: a duration before `nowMs` (`90s`, `10m`, `2h`, `1d`) or an absolute time (ISO 8601,
 * or log4j's `2023-07-17T17:00:25,016`; without a zone it is UTC, like the logs). Null when it is neither.
 */
export function parseSince(text: string, nowMs: number): number | null {
  const rel = RELATIVE.exec(text);
  if (rel !== null) return nowMs - Number(rel[1]) * (UNIT_MS[rel[2] as string] as number);
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2},\d{3}$/.test(text)) return logTimeMs(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return null;
  // A date-time without a zone is UTC, as the logs' times are (Date.parse would read it as local
  // time, while it reads a bare date as UTC); the space-separated form too (`'2026-11-21 14:35'`).
  const ms = Date.parse(/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(text) ? `${text}Z` : text);
  return Number.isNaN(ms) ? null : ms;
}

/** `KEY=VALUE` of `--dim`; null when there is no `=` or the key is empty. */
export function parseDim(text: string): readonly [string, string] | null {
  const eq = text.indexOf('=');
  return eq <= 0 ? null : [text.slice(0, eq), text.slice(eq + 1)];
}

/** The predicate of a selection. */
export function selector(sel: TailSelection): (r: TailRecord) => boolean {
  const metrics = new Set(sel.metrics);
  return (r) => {
    const l = r.line;
    if (sel.sinceMs !== null && !(r.timeMs >= sel.sinceMs)) return false;
    if (metrics.size > 0 && !metrics.has(l.name)) return false;
    if (sel.model !== null && !l.dimensions.some(([k, v]) => v === sel.model && MODEL_DIMENSIONS.includes(k)))
      return false;
    for (const [key, value] of sel.dims) {
      if (!l.dimensions.some(([k, v]) => k === key && v === value)) return false;
    }
    if (sel.request !== null && !requestIds(l).includes(sel.request)) return false;
    return true;
  };
}
