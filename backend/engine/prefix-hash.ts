/**
 * Hash chain over full KV blocks: a block's key covers its parent's key and its own tokens, so
 * equal keys mean equal token prefixes (and equal positions). Two independent 32-bit FNV-1a
 * style lanes give a 64-bit key; a collision would need both lanes to collide at once.
 */

/** Key of the block holding `tokens[start, start+blockSize)` after a block keyed `parent` ('' for the first). */
export function blockHash(parent: string, tokens: readonly number[], start: number, blockSize: number): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < parent.length; i++) {
    const c = parent.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  for (let i = start; i < start + blockSize; i++) {
    const t = tokens[i]! + 1;
    a = Math.imul(a ^ t, 0x01000193);
    a = Math.imul(a ^ (t >>> 8), 0x01000193);
    b = Math.imul(b ^ t, 0x5bd1e995) ^ (b >>> 13);
  }
  return (a >>> 0).toString(36) + '.' + (b >>> 0).toString(36);
}
