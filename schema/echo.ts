/**
 * Bounded echoes of request input in error messages: a refusal names what is wrong with a short
 * piece of what was sent, never all of it (a 900,001-digit number made a 900 KB 400 body, 50,000
 * bad logit_bias ids a 338 KB one). What is left out is counted: `…(N more)`. A string quoted
 * as JSON is cut by `excerpt()` (schema/files/model-file.ts); these are the other shapes.
 */

/** Most characters of a number's text (as the body wrote it) quoted in a message. */
export const MAX_ECHOED_NUMBER_CHARS = 40;

/** Most items of a list quoted in a message. */
export const MAX_ECHOED_ITEMS = 16;

/** A number as the body wrote it, cut to its first 40 characters and `…(N more)`. */
export function echoNumber(text: string): string {
  return text.length <= MAX_ECHOED_NUMBER_CHARS
    ? text
    : `${text.slice(0, MAX_ECHOED_NUMBER_CHARS)}…(${text.length - MAX_ECHOED_NUMBER_CHARS} more)`;
}

/** Items joined with ', ', the first 16 of them, then `…(N more)`. */
export function echoList(items: readonly unknown[]): string {
  const shown = items.slice(0, MAX_ECHOED_ITEMS).map(String).join(', ');
  return items.length <= MAX_ECHOED_ITEMS ? shown : `${shown}, …(${items.length - MAX_ECHOED_ITEMS} more)`;
}

/** Longest error message (characters) an answer or log line carries: the backstop for any echo not cut where it is made. */
export const MAX_ERROR_MESSAGE_CHARS = 1024;

/**
 * `message` cut (never in half a UTF-16 pair) and ended with `…(N more)`, 1024 characters in
 * all: a capped message passes unchanged through a second cap further on.
 */
export function capMessage(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  // Room for the suffix: `…(` + up to 16 digits + ` more)` is at most 24 characters.
  let end = MAX_ERROR_MESSAGE_CHARS - 24;
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}…(${message.length - end} more)`;
}

/** A name of the request quoted as it is (in backticks or quotes): whole up to 256 characters, else its first 80 and `…(N more)`. */
export function echoName(name: string): string {
  if (name.length <= 256) return name;
  let end = 80;
  const last = name.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${name.slice(0, end)}…(${name.length - end} more)`;
}
