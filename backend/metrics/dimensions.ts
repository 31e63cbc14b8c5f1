/** Orders caller-supplied dimension values into a metric's declared order. */
import type { DimensionValues } from '../../schema/metrics-api.js';
import { clip } from '../../schema/shown.js';

export { clip, show } from '../../schema/shown.js';

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
