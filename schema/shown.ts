/**
 * How a caller's value is shown in a warning or used as a table key: never throwing, and cut
 * so a handler inventing names of a megabyte cannot fill the log or the warning tables.
 */

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
