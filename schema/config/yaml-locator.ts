/**
 * Answers "where in the text is this key or value?" from the node tree the js-yaml adapter
 * builds (yaml-source.ts), knowing only the shape it walks.
 */
import type { SourcePos } from '../types.js';
import { toPos } from './text-pos.js';
import type { DocPath, Locator } from './yaml-types.js';

/** No offset (js-yaml's `-1`): a node without text of its own. */
const NONE = -1;

/** The part of a parsed node the locator reads: its kind, its first offset, its children. */
export type LocNode =
  | { readonly kind: 'scalar'; readonly start: number; readonly name: string | null }
  | { readonly kind: 'alias'; readonly start: number }
  | { readonly kind: 'seq'; readonly start: number; readonly items: readonly LocNode[] }
  | { readonly kind: 'map'; readonly start: number; readonly kids: readonly LocNode[] };

/** The locator of one document: walks the node tree along a path, never following an alias. */
export class TreeLocator implements Locator {
  constructor(
    private readonly text: string,
    private readonly lines: readonly number[],
    private readonly root: LocNode | null,
  ) {}

  value(path: DocPath): SourcePos {
    const found = this.walk(path);
    // An empty value (`help:` then a newline) has no text of its own: point at its key.
    return this.posOf(found.value, found.key, found.nearest);
  }

  key(path: DocPath): SourcePos {
    const found = this.walk(path);
    return this.posOf(found.key, found.value, found.nearest);
  }

  private walk(path: DocPath): { key: LocNode | null; value: LocNode | null; nearest: LocNode | null } {
    let node = this.root;
    let key: LocNode | null = null;
    for (const seg of path) {
      if (node === null) break;
      const next = child(node, seg);
      if (next === null) return { key: null, value: null, nearest: node };
      key = next.key;
      node = next.value;
      if (node === null) return { key, value: null, nearest: key };
    }
    return { key, value: node, nearest: node };
  }

  /** The first candidate that has text of its own; 1:1 if none does. */
  private posOf(...nodes: (LocNode | null)[]): SourcePos {
    const n = nodes.find((c) => c !== null && c.start !== NONE);
    return n === undefined || n === null ? { line: 1, col: 1 } : toPos(this.text, this.lines, n.start);
  }
}

/**
 * The key and value for one path segment. Aliases (and merged-in keys) are not followed: a
 * path through them stops at the alias, which is where the document says it.
 */
function child(node: LocNode, seg: string | number): { key: LocNode | null; value: LocNode | null } | null {
  if (node.kind === 'seq') {
    if (typeof seg !== 'number') return null;
    const item = node.items[seg];
    return item === undefined ? null : { key: item, value: item };
  }
  if (node.kind !== 'map') return null;
  for (let i = 0; i < node.kids.length; i += 2) {
    const k = node.kids[i] as LocNode;
    if (k.kind !== 'scalar' || k.name !== String(seg)) continue;
    return { key: k, value: node.kids[i + 1] ?? null };
  }
  return null;
}
