/**
 * GPT-2's byte-level alphabet (the `ByteLevel` pre-tokenizer and decoder of `tokenizer.json`):
 * every byte 0..255 is one printable character, so a BPE token string spells its bytes. The
 * printable Latin-1 bytes stand for themselves; the other 68 map to U+0100 and up in byte order.
 */

/** The character of each byte (index = byte). */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const keep = (b: number): boolean => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  const out: string[] = [];
  let next = 0x100;
  for (let b = 0; b < 256; b++) out.push(String.fromCharCode(keep(b) ? b : next++));
  return Object.freeze(out);
})();

const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** The bytes a byte-level token string spells, or undefined when a character is outside the alphabet. */
export function byteLevelBytes(token: string): Uint8Array | undefined {
  const out = new Uint8Array(token.length);
  for (let i = 0; i < token.length; i++) {
    const b = CHAR_TO_BYTE.get(token[i]!);
    if (b === undefined) return undefined;
    out[i] = b;
  }
  return out;
}

/** The token string of `bytes` in the byte-level alphabet. */
export function byteLevelString(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += BYTE_TO_CHAR[b]!;
  return s;
}
