/**
 * The js-yaml adapter: parses metrics.yaml and keeps where every node came from, so a problem
 * found later (by ajv or by a rule) can point at the exact line and column of the offending
 * key or value. js-yaml 4 has no AST with positions, but its `listener` reports each node's
 * open and close offsets in properly nested order; we rebuild a light node tree from those.
 */
import * as yaml from 'js-yaml';
import type { SourcePos } from '../types';

/** A path into the parsed document: mapping keys and sequence indexes. */
export type DocPath = readonly (string | number)[];

/** Answers "where in the text is this key or value?" for a parsed document. */
export interface Locator {
  /** Position of the value at `path` (falls back to the nearest ancestor found). */
  value(path: DocPath): SourcePos;
  /** Position of the key naming the last segment of `path` (a sequence item: the item). */
  key(path: DocPath): SourcePos;
}

/** Result of parsing: the plain JS value plus a locator, or the YAML error with its position. */
export type YamlParse =
  | { readonly ok: true; readonly value: unknown; readonly locator: Locator }
  | { readonly ok: false; readonly pos: SourcePos; readonly reason: string; readonly alias: string | null };

interface Node {
  readonly start: number;
  end: number;
  result: unknown;
  readonly children: Node[];
}

// CORE (YAML 1.2: no dates, `yes` stays a string) plus merge keys, so `<<: *common` works.
// (@types/js-yaml does not declare the exported `types` table.)
const MERGE = (yaml as unknown as { readonly types: { readonly merge: yaml.Type } }).types.merge;
const SCHEMA = yaml.CORE_SCHEMA.extend({ implicit: [MERGE] });

/** Parses YAML text; never throws. */
export function parseYaml(text: string): YamlParse {
  const lines = lineStarts(text);
  const stack: Node[] = [];
  let root: Node | null = null;
  const listener = (event: yaml.EventType, state: yaml.State): void => {
    if (event === 'open') {
      stack.push({ start: state.position, end: state.position, result: undefined, children: [] });
      return;
    }
    const node = stack.pop();
    if (node === undefined) return;
    node.end = state.position;
    node.result = state.result;
    const parent = stack[stack.length - 1];
    if (parent !== undefined) parent.children.push(node);
    else root = node;
  };
  let value: unknown;
  try {
    value = yaml.load(text, { schema: SCHEMA, listener });
  } catch (err) {
    return yamlError(err, text, lines);
  }
  const locator = new TreeLocator(text, lines, root);
  return { ok: true, value, locator };
}

function yamlError(err: unknown, text: string, lines: readonly number[]): YamlParse {
  if (err instanceof yaml.YAMLException) {
    const mark = err.mark as { line?: number; column?: number; position?: number } | undefined;
    const pos = mark !== undefined && typeof mark.line === 'number' && typeof mark.column === 'number'
      ? { line: mark.line + 1, col: mark.column + 1 }
      : { line: 1, col: 1 };
    const alias = /^unidentified alias "(.*)"$/.exec(err.reason);
    if (alias !== null && mark !== undefined && typeof mark.position === 'number') {
      // js-yaml marks the end of the alias token; point at its `*` instead.
      const at = text.lastIndexOf('*' + alias[1], mark.position);
      const p = at >= 0 ? toPos(lines, at) : pos;
      return { ok: false, pos: p, reason: err.reason, alias: alias[1] ?? '' };
    }
    return { ok: false, pos, reason: err.reason, alias: null };
  }
  return { ok: false, pos: { line: 1, col: 1 }, reason: String(err), alias: null };
}

class TreeLocator implements Locator {
  constructor(
    private readonly text: string,
    private readonly lines: readonly number[],
    private readonly root: Node | null,
  ) {}

  value(path: DocPath): SourcePos {
    const found = this.walk(path);
    // An empty value (`help:` then a newline) has no text of its own: point at its key.
    const value = found.value !== null && this.isEmpty(found.value) ? null : found.value;
    return this.posOf(value ?? found.key ?? found.nearest);
  }

  key(path: DocPath): SourcePos {
    const found = this.walk(path);
    return this.posOf(found.key ?? found.value ?? found.nearest);
  }

  private walk(path: DocPath): { key: Node | null; value: Node | null; nearest: Node | null } {
    let node = this.root === null ? null : unwrap(this.root);
    let key: Node | null = null;
    for (const seg of path) {
      if (node === null) break;
      const next = this.child(node, seg);
      if (next === null) return { key: null, value: null, nearest: node };
      key = next.key;
      node = next.value === null ? null : unwrap(next.value);
      if (node === null) return { key, value: null, nearest: key };
    }
    return { key, value: node, nearest: node };
  }

  private child(node: Node, seg: string | number): { key: Node | null; value: Node | null } | null {
    const kids = node.children;
    if (Array.isArray(node.result)) {
      if (typeof seg !== 'number') return null;
      // Each sequence item is one direct child, in order.
      const item = kids.length === node.result.length ? kids[seg] : undefined;
      return item === undefined ? null : { key: item, value: item };
    }
    for (let i = 0; i < kids.length; i++) {
      const k = kids[i] as Node;
      if (!this.isKey(k) || String(k.result) !== String(seg)) continue;
      const v = kids[i + 1];
      return { key: k, value: v !== undefined && !this.isKey(v) ? v : null };
    }
    return null;
  }

  private isEmpty(n: Node): boolean {
    return (n.result === null || n.result === undefined) && skipBlank(this.text, n.start) >= n.end;
  }

  /** A mapping key is the only kind of node directly followed (same line) by `:`. */
  private isKey(n: Node): boolean {
    if (n.result !== null && typeof n.result === 'object') return false;
    let i = n.end;
    while (i < this.text.length && (this.text[i] === ' ' || this.text[i] === '\t')) i++;
    return this.text[i] === ':';
  }

  private posOf(n: Node | null): SourcePos {
    if (n === null) return { line: 1, col: 1 };
    return toPos(this.lines, skipBlank(this.text, n.start));
  }
}

/**
 * js-yaml sometimes wraps a node in a second one with the same result (a flow collection or an
 * anchored scalar as a block-sequence item); descend to the node that holds the children.
 */
function unwrap(n: Node): Node {
  let cur = n;
  while (cur.children.length === 1 && typeof cur.result === 'object' && cur.result !== null && (cur.children[0] as Node).result === cur.result) {
    cur = cur.children[0] as Node;
  }
  return cur;
}

/** Skips spaces, line breaks and comments: js-yaml opens a node before its leading blanks. */
function skipBlank(text: string, from: number): number {
  let i = from;
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\ufeff') i++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1] ?? ' '))) {
      while (i < text.length && text[i] !== '\n') i++;
    } else break;
  }
  return i;
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

/** Offset → 1-based line and column. */
function toPos(lines: readonly number[], offset: number): SourcePos {
  let lo = 0;
  let hi = lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((lines[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, col: offset - (lines[lo] as number) + 1 };
}
