/**
 * Hash chain over full KV blocks, as vLLM's: a block's key is sha256 over its parent's key, its
 * own tokens and (first block only, so the whole chain inherits it) the request's cache salt.
 * Equal keys mean equal token prefixes at equal positions under the same salt; sha256 makes a
 * crafted collision (one tenant reading another's K/V) impractical, which a 64-bit FNV was not.
 */
import { createHash } from 'node:crypto';

/** Key of the block holding `tokens[start, start+blockSize)` after a block keyed `parent` ('' for the first). */
export function blockHash(
  parent: string,
  tokens: readonly number[],
  start: number,
  blockSize: number,
  cacheSalt = '',
): string {
  const h = createHash('sha256');
  h.update(parent);
  // Tokens as one little-endian int32 run: unambiguous (fixed width), no string per token.
  const buf = new Int32Array(blockSize);
  for (let i = 0; i < blockSize; i++) buf[i] = tokens[start + i]!;
  h.update(new Uint8Array(buf.buffer));
  // Only the first block carries the salt; the chain carries it on. Length-prefixed so that
  // salt bytes can never read as tokens.
  if (parent === '' && cacheSalt !== '') h.update(`salt:${cacheSalt.length}:${cacheSalt}`);
  return h.digest('base64');
}
