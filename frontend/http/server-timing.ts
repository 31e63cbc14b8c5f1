/**
 * The `Server-Timing` header (W3C Server Timing): where a request's time went, in
 * milliseconds, so a browser's devtools or `curl -i` shows it. Durations are the same numbers
 * the request recorded into its metrics, rounded to the microsecond.
 */

/** One metric of the header: a name and a duration in ms. */
export type TimingEntry = readonly [name: string, durMs: number];

/** `queue;dur=1.2, handler;dur=3.4, total;dur=5`; non-finite or negative durations are left out. */
export function serverTiming(entries: readonly TimingEntry[]): string {
  const parts: string[] = [];
  for (const [name, ms] of entries) {
    if (!Number.isFinite(ms) || ms < 0) continue;
    parts.push(`${name};dur=${Math.round(ms * 1000) / 1000}`);
  }
  return parts.join(', ');
}

/** Parses a Server-Timing value into name → duration (ms); entries without `dur` are left out. */
export function parseServerTiming(value: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of value.split(',')) {
    const [name, ...params] = part.trim().split(';');
    for (const p of params) {
      const [k, v] = p.trim().split('=');
      if (name !== undefined && name !== '' && k === 'dur' && v !== undefined) out[name] = Number(v);
    }
  }
  return out;
}

/** One entry of `serverTiming`'s text, or '' for a duration it leaves out. */
function timingPart(name: string, ms: number): string {
  return !Number.isFinite(ms) || ms < 0 ? '' : `${name};dur=${Math.round(ms * 1000) / 1000}`;
}

/** `a, b`, or the one that is not empty. */
function joined(a: string, b: string): string {
  return a === '' ? b : b === '' ? a : a + ', ' + b;
}

/**
 * The header of a batched inference: queue, handler (when the worker ran it), total; inputs in
 * µs. The text of `serverTiming` for those entries, built without its arrays (it is written on
 * every prediction).
 */
export function predictionTiming(queueUs: number, handlerUs: number | undefined, totalUs: number): string {
  const head = timingPart('queue', queueUs / 1000);
  const mid = handlerUs === undefined ? head : joined(head, timingPart('handler', handlerUs / 1000));
  return joined(mid, timingPart('total', totalUs / 1000));
}

/** The header of a generation: the engine's queue, prefill and decode phases, and the total (ms). */
export function generationTiming(t: {
  readonly queueMs: number;
  readonly prefillMs: number;
  readonly decodeMs: number;
  readonly totalMs: number;
}): string {
  return serverTiming([
    ['queue', t.queueMs],
    ['prefill', t.prefillMs],
    ['decode', t.decodeMs],
    ['total', t.totalMs],
  ]);
}
