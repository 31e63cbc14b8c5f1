/**
 * Decodes the usual `/predictions` body of a tensor model — a JSON array of numbers, or
 * `{"data": [...]}` / `{"input": [...]}` — in one pass over the bytes, straight into a
 * Float32Array: no string, no JS array, no boxed numbers. Numbers round exactly as JSON.parse
 * followed by a Float32Array store would. Anything else it leaves to the general path
 * (`kind: 'json'`): another shape, a non-number element, an empty array, a syntax error.
 */
import { elementsMessage } from './json-bounds.js';
import { echoNumber } from '../../schema/echo.js';

/** What the decoder made of a body. */
export type JsonTensor =
  | { readonly kind: 'tensor'; readonly data: Float32Array }
  | { readonly kind: 'json' }
  | { readonly kind: 'error'; readonly message: string };

const JSON_FALLBACK: JsonTensor = { kind: 'json' };

/** Exact powers of ten as doubles (10^22 is the last one a double holds exactly). */
const POW10 = Array.from({ length: 23 }, (_v, i) => Number(`1e${i}`));

/** Largest mantissa (in digits) parsed by arithmetic: below 2^53, so exact. */
const FAST_DIGITS = 15;

/** Reused across calls: the decoded values before they are copied out at their exact length. */
let scratch = new Float32Array(1024);

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(b: Uint8Array, i: number): number {
  while (i < b.length && isSpace(b[i]!)) i++;
  return i;
}

/** Matches `"data"` or `"input"` (no escapes) at `i`; returns the index after it, or -1. */
function wrapperKey(b: Uint8Array, i: number): number {
  const key = b[i + 1] === 0x64 ? 'data"' : b[i + 1] === 0x69 ? 'input"' : '';
  if (b[i] !== 0x22 || key === '') return -1;
  for (let k = 0; k < key.length; k++) if (b[i + 1 + k] !== key.charCodeAt(k)) return -1;
  return i + 1 + key.length;
}

/** The message for a number that overflows float32 (its text as the body wrote it). */
export function float32Message(index: number, text: string): string {
  return `element ${index} (${echoNumber(text)}) is not finite in float32 (largest magnitude 3.4028234663852886e38)`;
}

/**
 * Decodes `body` (at most `maxElements` numbers). Errors are limits and float32 overflow,
 * each with its message; a body of another form comes back as `json`.
 */
export function decodeJsonTensor(body: Uint8Array, maxElements: number): JsonTensor {
  let i = skipSpace(body, 0);
  let wrapped = false;
  if (body[i] === 0x7b) {
    i = wrapperKey(body, skipSpace(body, i + 1));
    if (i < 0) return JSON_FALLBACK;
    i = skipSpace(body, i);
    if (body[i] !== 0x3a) return JSON_FALLBACK;
    i = skipSpace(body, i + 1);
    wrapped = true;
  }
  if (body[i] !== 0x5b) return JSON_FALLBACK;
  i = skipSpace(body, i + 1);
  if (body[i] === 0x5d) return JSON_FALLBACK; // `[]`: the handler says what it expected
  let n = 0;
  for (;;) {
    // One JSON number: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?
    const start = i;
    let neg = false;
    if (body[i] === 0x2d) {
      neg = true;
      i++;
    }
    let c = body[i] ?? 0;
    if (c < 0x30 || c > 0x39) return JSON_FALLBACK;
    let mant = 0;
    let digits = 0;
    let scale = 0;
    if (c === 0x30) {
      i++;
    } else {
      while (c >= 0x30 && c <= 0x39) {
        if (digits < FAST_DIGITS) {
          mant = mant * 10 + (c - 0x30);
          digits++;
        } else {
          scale++;
          digits++;
        }
        c = body[++i] ?? 0;
      }
    }
    c = body[i] ?? 0;
    if (c === 0x2e) {
      c = body[++i] ?? 0;
      if (c < 0x30 || c > 0x39) return JSON_FALLBACK;
      while (c >= 0x30 && c <= 0x39) {
        if (mant === 0 && c === 0x30) {
          scale--;
        } // leading zeros of a fraction cost no digit
        else if (digits < FAST_DIGITS) {
          mant = mant * 10 + (c - 0x30);
          digits++;
          scale--;
        } else {
          digits++;
        }
        c = body[++i] ?? 0;
      }
    }
    let exp = 0;
    if (c === 0x65 || c === 0x45) {
      c = body[++i] ?? 0;
      let eneg = false;
      if (c === 0x2b || c === 0x2d) {
        eneg = c === 0x2d;
        c = body[++i] ?? 0;
      }
      if (c < 0x30 || c > 0x39) return JSON_FALLBACK;
      while (c >= 0x30 && c <= 0x39) {
        if (exp < 100_000) exp = exp * 10 + (c - 0x30);
        c = body[++i] ?? 0;
      }
      if (eneg) exp = -exp;
    }
    let v: number;
    const e10 = scale + exp;
    if (digits <= FAST_DIGITS && e10 >= -22 && e10 <= 22) {
      // Both operands exact doubles: one correctly rounded operation (Clinger's fast path).
      v = e10 >= 0 ? mant * POW10[e10]! : mant / POW10[-e10]!;
      if (neg) v = -v;
    } else {
      v = Number(Buffer.from(body.buffer, body.byteOffset + start, i - start).toString('latin1'));
    }
    if (n >= maxElements) return { kind: 'error', message: elementsMessage(maxElements) };
    if (n === scratch.length) {
      const grown = new Float32Array(Math.min(scratch.length * 2, Math.max(maxElements, 1)));
      grown.set(scratch);
      scratch = grown;
    }
    scratch[n] = v;
    const f = scratch[n]!;
    if (f - f !== 0) {
      return {
        kind: 'error',
        message: float32Message(n, Buffer.from(body.buffer, body.byteOffset + start, i - start).toString('latin1')),
      };
    }
    n++;
    i = skipSpace(body, i);
    c = body[i] ?? 0;
    if (c === 0x2c) {
      i = skipSpace(body, i + 1);
      continue;
    }
    if (c !== 0x5d) return JSON_FALLBACK;
    i = skipSpace(body, i + 1);
    break;
  }
  if (wrapped) {
    if (body[i] !== 0x7d) return JSON_FALLBACK;
    i = skipSpace(body, i + 1);
  }
  if (i !== body.length) return JSON_FALLBACK;
  return { kind: 'tensor', data: scratch.slice(0, n) };
}
