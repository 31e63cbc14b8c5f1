/** Turning a caller's dimension values (array or object) into the declared order, checked. */
import type { MetricSpec } from '../../schema/types.js';
import type { DimensionValues } from './api.js';

const EMPTY: readonly string[] = Object.freeze([]);

/**
 * Values in `spec.dimensions` order, or null when they do not fit: wrong count, an unknown
 * name (the hostname included: callers never pass it), or a value that is not a string.
 */
export function resolveDimensions(spec: MetricSpec, given: DimensionValues | undefined): readonly string[] | null {
  const names = spec.dimensions;
  if (given === undefined || given === null) return names.length === 0 ? EMPTY : null;
  if (Array.isArray(given)) {
    const arr = given as readonly unknown[];
    if (arr.length !== names.length) return null;
    for (let i = 0; i < arr.length; i++) if (typeof arr[i] !== 'string') return null;
    return arr as readonly string[];
  }
  if (typeof given !== 'object') return null;
  const obj = given as Readonly<Record<string, unknown>>;
  const out = new Array<string>(names.length);
  for (let i = 0; i < names.length; i++) {
    const v = obj[names[i] as string];
    if (typeof v !== 'string' || !Object.prototype.hasOwnProperty.call(obj, names[i] as string)) return null;
    out[i] = v;
  }
  // Every declared name was present; any extra key is an unknown dimension.
  if (Object.keys(obj).length !== names.length) return null;
  return out;
}
