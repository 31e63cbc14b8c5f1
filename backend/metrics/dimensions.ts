/** Orders caller-supplied dimension values into a metric's declared order. */
import type { DimensionValues } from '../../schema/metrics-api.js';

/** The ordered values, or `null` when they do not match the declared names exactly. */
export function orderDimensionValues(names: readonly string[], given: DimensionValues | undefined): string[] | null {
  if (given === undefined || given === null) return names.length === 0 ? [] : null;
  if (Array.isArray(given)) {
    if (given.length !== names.length) return null;
    for (const v of given) if (typeof v !== 'string') return null;
    return (given as readonly string[]).slice();
  }
  if (typeof given !== 'object') return null;
  const byName = given as Readonly<Record<string, unknown>>;
  const keys = Object.keys(byName);
  if (keys.length !== names.length) return null;
  const out = new Array<string>(names.length);
  for (let i = 0; i < names.length; i++) {
    const n = names[i];
    if (!Object.prototype.hasOwnProperty.call(byName, n)) return null;
    const v = byName[n];
    if (typeof v !== 'string') return null;
    out[i] = v;
  }
  return out;
}

/** `[a, b]`-style rendering for messages (JSON so `,` `:` `|` inside values stay visible), cut like `clip`. */
export function describeDimensionValues(given: unknown): string {
  try {
    return clip(JSON.stringify(given) ?? String(given));
  } catch {
    try {
      return String(given);
    } catch {
      return '(unprintable value)';
    }
  }
}

/** `String(x)` for messages and keys; never throws (a Symbol, or an object whose toString throws). */
export function show(x: unknown): string {
  if (typeof x === 'string') return x;
  try {
    return x instanceof Error ? x.message : String(x);
  } catch {
    return '(unprintable value)';
  }
}

/** Characters of a handler's name or value a warning or a table key keeps. */
const SHOWN_CHARS = 200;

/**
 * `show(x)` cut to SHOWN_CHARS with its length: a handler inventing names of a megabyte would
 * otherwise fill the log, and the worker's warning tables would keep every one.
 */
export function clip(x: unknown): string {
  const s = show(x);
  return s.length <= SHOWN_CHARS ? s : `${s.slice(0, SHOWN_CHARS)}… (${s.length} characters)`;
}
