/**
 * Content negotiation of `GET /metrics`: OpenMetrics 1.0 when the `Accept` header asks for
 * `application/openmetrics-text` (version 1.0.0 or unversioned) with a non-zero q, the text
 * format 0.0.4 otherwise. Prometheus sends
 * `application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*\/*;q=0.1`.
 */
import { OPENMETRICS_CONTENT_TYPE } from './openmetrics-renderer.js';
import { TEXT_CONTENT_TYPE } from './text-renderer.js';

/** The two exposition formats. */
export type ExpositionFormat = 'text' | 'openmetrics';

interface Offer {
  readonly format: ExpositionFormat;
  readonly q: number;
}

function parseRange(range: string): Offer | null {
  const [type, ...params] = range.split(';').map((p) => p.trim());
  let q = 1;
  let version: string | undefined;
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq).trim().toLowerCase();
    const v = p
      .slice(eq + 1)
      .trim()
      .replace(/^"|"$/g, '');
    if (k === 'q') q = Number(v);
    else if (k === 'version') version = v;
  }
  if (!(q > 0)) return null;
  const t = (type ?? '').toLowerCase();
  if (t === 'application/openmetrics-text') {
    return version === undefined || version === '1.0.0' ? { format: 'openmetrics', q } : null;
  }
  if (t === 'text/plain' || t === 'text/*' || t === '*/*') return { format: 'text', q };
  return null;
}

/** The format to answer an `Accept` header with (text when it is absent or names nothing we speak). */
export function negotiate(accept: string | undefined): ExpositionFormat {
  if (accept === undefined || accept === '') return 'text';
  let best: Offer | null = null;
  for (const range of accept.split(',')) {
    const o = parseRange(range);
    // Ties go to the earlier range (Prometheus lists OpenMetrics first).
    if (o !== null && (best === null || o.q > best.q)) best = o;
  }
  return best?.format ?? 'text';
}

/** The response content type of a format. */
export function contentType(format: ExpositionFormat): string {
  return format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : TEXT_CONTENT_TYPE;
}
