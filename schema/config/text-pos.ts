/** Offsets into a text as the 1-based lines and columns a message points at. */
import type { SourcePos } from '../types.js';

/** Where each line starts; a lone CR breaks a line as in YAML (LF and CRLF too). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) starts.push(i + 1);
  }
  return starts;
}

/** The zero-based line holding `offset`. */
export function lineOf(lines: readonly number[], offset: number): number {
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((lines[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Offset → 1-based line and column (a leading byte-order mark takes no column). */
export function toPos(text: string, lines: readonly number[], offset: number): SourcePos {
  const lo = lineOf(lines, offset);
  const bom = lo === 0 && text.charCodeAt(0) === 0xfeff ? 1 : 0;
  return { line: lo + 1, col: Math.max(1, offset - (lines[lo] as number) + 1 - bom) };
}
