/**
 * Strict reading of the management API's query parameters: a single-valued parameter given
 * twice, an integer that is not plain decimal digits within its bound, or a boolean other than
 * true/false is a 400 naming the parameter (never a silent last-wins, `1e3` or `maybe` → false).
 */
import type { IntBound } from '../store/model-bounds.js';
import { boundText } from '../store/model-bounds.js';

const DIGITS = /^[0-9]+$/;

/** Reads parameters in order; the first problem is kept in `error` and later reads return undefined. */
export class QueryParams {
  /** The first problem found, as the 400's message; null while every read was fine. */
  error: string | null = null;

  constructor(private readonly query: Readonly<Record<string, unknown>>) {}

  /**
   * Refuses the first parameter `route` does not take (a typo such as `initial_worker`, or a
   * TorchServe parameter this server has no use for) rather than ignoring it: with `notes`, the
   * reason it is not taken; else the parameters `route` takes.
   */
  only(route: string, taken: readonly string[], notes: Readonly<Record<string, string>> = {}): void {
    if (this.error !== null) return;
    const extra = Object.keys(this.query).find((k) => !taken.includes(k));
    if (extra === undefined) return;
    const note = Object.hasOwn(notes, extra) ? notes[extra] : undefined;
    this.error =
      note !== undefined
        ? `parameter ${extra} is not one ${route} takes: ${note}`
        : `parameter ${extra} is not one ${route} takes (it takes ${taken.join(', ')})`;
  }

  /** The parameter's one value; undefined when absent (or after an error). */
  string(key: string): string | undefined {
    if (this.error !== null) return undefined;
    const v = this.query[key];
    if (v === undefined) return undefined;
    if (typeof v === 'string') return v;
    const n = Array.isArray(v) ? v.length : 1;
    this.error = `parameter ${key} must be given once (got ${n} values)`;
    return undefined;
  }

  /** An integer of plain decimal digits within `b`; absent or empty is undefined. */
  int(key: string, b: IntBound): number | undefined {
    const v = this.string(key);
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!DIGITS.test(v) || n < b.min || n > b.max) {
      this.error = `parameter ${key} must be ${boundText(b)} (got '${v}')`;
      return undefined;
    }
    return n;
  }

  /** `true` or `false` (any case, as TorchServe's Boolean.parseBoolean); absent is `def`. */
  bool(key: string, def: boolean): boolean {
    const v = this.string(key);
    if (v === undefined) return def;
    const lower = v.toLowerCase();
    if (lower === 'true') return true;
    if (lower !== 'false') this.error = `parameter ${key} must be true or false (got '${v}')`;
    return false;
  }
}
