/**
 * Bounds a JSON text before it is parsed: how deep its arrays and objects nest and how many
 * values they hold. A body within them parses to a value the worker channel can always carry
 * (V8's serializer recurses, and overflows its stack near 5,000 levels), and cannot blow up
 * into millions of objects. One pass over the bytes; the syntax is JSON.parse's business.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The message for a body nested deeper than `maxDepth`. */
export function depthMessage(maxDepth: number): string {
  return `JSON body nests deeper than ${maxDepth} levels (--max-json-depth)`;
}

/** The message for a body holding more than `maxElements` values. */
export function elementsMessage(maxElements: number): string {
  return `JSON body has more than ${maxElements} elements (--max-json-elements)`;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Null when `text` nests at most `maxDepth` levels and holds at most `maxElements` values in
 * its arrays and objects (an object member counts once), else the message naming the limit.
 */
export function jsonBoundsProblem(text: Uint8Array, maxDepth: number, maxElements: number): string | null {
  let depth = 0;
  let elements = 0;
  // True right after `[` or `{`: the next value (if any) is the container's first.
  let open = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i]!;
    if (isSpace(c) || c === COLON) continue;
    if (c === COMMA) {
      if (++elements > maxElements) return elementsMessage(maxElements);
      open = false;
      continue;
    }
    if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
      open = false;
      continue;
    }
    if (open) {
      if (++elements > maxElements) return elementsMessage(maxElements);
      open = false;
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > maxDepth) return depthMessage(maxDepth);
      open = true;
    } else if (c === QUOTE) {
      for (i++; i < n; i++) {
        const s = text[i]!;
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    }
  }
  return null;
}
