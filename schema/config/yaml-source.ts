/**
 * The js-yaml adapter: parses metrics.yaml and keeps where every node came from, so a problem
 * found later (by ajv or by a rule) can point at the exact line and column of the offending
 * key or value. js-yaml 5 parses into a flat event stream whose events carry zero-based source
 * offsets; we build a light node tree from that stream (for positions) and construct the value
 * from the very same events (one parse).
 */
import {
  COLLECTION_STYLE,
  CORE_SCHEMA,
  EVENT_ID,
  SCALAR_STYLE,
  YAMLException,
  constructFromEvents,
  getScalarValue,
  mergeTag,
  load,
  parseEvents,
} from 'js-yaml';
import type { DocumentEvent, Event, ScalarEvent } from 'js-yaml';
import { lineOf, lineStarts, toPos } from './text-pos.js';
import { TreeLocator } from './yaml-locator.js';
import type { DocPath, DuplicateKey, YamlParse } from './yaml-types.js';

export type { DocPath, DuplicateKey, ExpansionProblem, Locator, YamlParse } from './yaml-types.js';

/**
 * Most nodes all aliases of a document may bring in, counted as if each were written out. An
 * alias costs nothing to parse, but everything that walks the value (the schema check, the
 * rules, a message quoting a list) walks each copy: ten anchors each repeating the one before
 * ten times ("billion laughs") parse in a millisecond and then hang or crash the loader. A real
 * metrics.yaml brings in a few hundred (names, the odd merged mapping).
 */
export const MAX_ALIAS_EXPANSION = 100_000;

// CORE (YAML 1.2: no dates, `yes` stays a string) plus merge keys, so `<<: *common` works.
const SCHEMA = CORE_SCHEMA.withTags(mergeTag);

/**
 * js-yaml's cap on merged keys (10000 per load) is off: it refused a plain file of 3500 metrics
 * merging 3 shared keys each, as a syntax error. What merges copy comes through aliases, which
 * MAX_ALIAS_EXPANSION bounds (an inline `<<: {…}` copies only what is written).
 */
const CONSTRUCT = { schema: SCHEMA, maxTotalMergeKeys: -1 } as const;

/** No offset (js-yaml's `-1`): an empty scalar without an anchor or a tag has no text at all. */
const NONE = -1;

interface NodeBase {
  /** Offset of the node's first character (its `&anchor` or `!tag` if any), or NONE. */
  readonly start: number;
  /** Offset js-yaml reports errors about this node at (tag, else anchor name, else value). */
  readonly mark: number;
  /** Nodes it stands for once aliases are written out (itself included); set when it is complete. */
  size?: number;
}
interface ScalarNode extends NodeBase {
  readonly kind: 'scalar';
  readonly event: ScalarEvent;
  readonly doc: DocumentEvent;
  /** `String()` of the constructed key, filled in for mapping keys once the document is built. */
  name: string | null;
}
interface AliasNode extends NodeBase {
  readonly kind: 'alias';
  /** The anchor name, without the `*`. */
  readonly name: string;
}
interface SeqNode extends NodeBase {
  readonly kind: 'seq';
  /** A block sequence: offset of its first `-` (every item starts with a `-` in that column); else NONE. */
  readonly dash: number;
  readonly items: YNode[];
}
interface MapNode extends NodeBase {
  readonly kind: 'map';
  /** Alternating key, value, key, value… (a complete mapping has an even count). */
  readonly kids: YNode[];
}
type YNode = ScalarNode | AliasNode | SeqNode | MapNode;

/** The node tree of one parse: one root per document, plus every mapping key. */
interface Tree {
  readonly roots: (YNode | null)[];
  readonly keys: YNode[];
  readonly aliases: AliasNode[];
  /** The alias that took the expansion past MAX_ALIAS_EXPANSION, or null. */
  readonly bomb: AliasNode | null;
}

/** Parses YAML text; never throws. */
export function parseYaml(text: string): YamlParse {
  const lines = lineStarts(text);
  let events: Event[];
  try {
    events = parseEvents(text, {});
  } catch (err) {
    return yamlError(err, text, lines, null);
  }
  const tree = buildTree(text, lines, events);
  if (tree.bomb !== null) {
    const b = tree.bomb;
    return {
      ok: false,
      pos: toPos(text, lines, b.start),
      reason: `alias "*${b.name}" brings in ${b.size} nodes, past the ${MAX_ALIAS_EXPANSION} all aliases may bring in`,
      alias: null,
      expansion: { alias: b.name, nodes: b.size ?? 0 },
    };
  }
  let docs: unknown[];
  let duplicates: DuplicateKey[] = [];
  try {
    docs = constructFromEvents(events, { source: text, ...CONSTRUCT });
  } catch (err) {
    if (!(err instanceof YAMLException) || err.reason !== 'duplicated mapping key')
      return yamlError(err, text, lines, tree);
    nameKeys(text, tree.keys);
    duplicates = duplicateKeys(text, lines, tree.roots[0] ?? null);
    // One js-yaml found but the tree cannot place (a key no scalar names) stays the one error.
    if (duplicates.length === 0) return yamlError(err, text, lines, tree);
    try {
      docs = constructFromEvents(events, { source: text, ...CONSTRUCT, json: true });
    } catch (again) {
      return yamlError(again, text, lines, tree);
    }
  }
  if (docs.length > 1) {
    return {
      ok: false,
      pos: { line: 1, col: 1 },
      reason: 'expected a single document in the stream, but found more',
      alias: null,
    };
  }
  nameKeys(text, tree.keys);
  const locator = new TreeLocator(text, lines, tree.roots[0] ?? null);
  return { ok: true, value: docs[0], locator, duplicates };
}

/** Every key given again in its mapping, in file order (walked with a stack: nesting can be deep). */
function duplicateKeys(text: string, lines: readonly number[], root: YNode | null): DuplicateKey[] {
  const out: DuplicateKey[] = [];
  const stack: { node: YNode; path: DocPath }[] = root === null ? [] : [{ node: root, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop() as { node: YNode; path: DocPath };
    if (node.kind === 'seq') {
      node.items.forEach((item, i) => stack.push({ node: item, path: [...path, i] }));
    } else if (node.kind === 'map') {
      const seen = new Map<string, YNode>();
      for (let i = 0; i + 1 < node.kids.length; i += 2) {
        const k = node.kids[i] as YNode;
        const name = k.kind === 'scalar' ? k.name : null;
        if (name === null) continue;
        const first = seen.get(name);
        // `<<` may repeat: each merges one more mapping in.
        if (first !== undefined && name !== '<<') {
          out.push({
            pos: toPos(text, lines, k.start),
            key: name,
            firstLine: toPos(text, lines, first.start).line,
            path,
          });
        } else if (first === undefined) seen.set(name, k);
        stack.push({ node: node.kids[i + 1] as YNode, path: [...path, name] });
      }
    }
  }
  return out.sort((a, b) => a.pos.line - b.pos.line || a.pos.col - b.pos.col);
}

/** Rebuilds the node nesting from the flat event stream (POP closes the latest open node). */
function buildTree(text: string, lines: readonly number[], events: readonly Event[]): Tree {
  const roots: (YNode | null)[] = [];
  const keys: YNode[] = [];
  const aliases: AliasNode[] = [];
  // The node each anchor names now (a later `&a` redefines it, as in YAML), for alias sizes.
  const anchors = new Map<string, YNode>();
  let expanded = 0;
  let bomb: AliasNode | null = null;
  const anchor = (node: YNode, ev: { anchorStart: number; anchorEnd: number }): void => {
    if (ev.anchorStart !== NONE) anchors.set(text.slice(ev.anchorStart, ev.anchorEnd), node);
  };
  // Open containers; `null` stands for the open document.
  const stack: (SeqNode | MapNode | null)[] = [];
  let doc: DocumentEvent | null = null;
  let prevEnd = 0;
  const add = (node: YNode): void => {
    const parent = stack[stack.length - 1];
    if (parent === undefined) return;
    if (parent === null) {
      roots[roots.length - 1] = node;
    } else if (parent.kind === 'seq') {
      parent.items.push(node);
    } else {
      if (parent.kids.length % 2 === 0) keys.push(node);
      parent.kids.push(node);
    }
  };
  for (const ev of events) {
    switch (ev.type) {
      case EVENT_ID.DOCUMENT:
        doc = ev;
        roots.push(null);
        stack.push(null);
        break;
      case EVENT_ID.SEQUENCE:
      case EVENT_ID.MAPPING: {
        const start = earliest(propsStart(text, ev.anchorStart, ev.tagStart), ev.start);
        const mark = firstOf(ev.tagStart, ev.anchorStart, ev.start);
        const node: SeqNode | MapNode =
          ev.type === EVENT_ID.SEQUENCE
            ? { kind: 'seq', start, mark, dash: ev.style === COLLECTION_STYLE.BLOCK ? ev.start : NONE, items: [] }
            : { kind: 'map', start, mark, kids: [] };
        add(node);
        anchor(node, ev);
        stack.push(node);
        prevEnd = Math.max(prevEnd, ev.start, ev.anchorEnd, ev.tagEnd);
        break;
      }
      case EVENT_ID.SCALAR: {
        let start = earliest(propsStart(text, ev.anchorStart, ev.tagStart), scalarStart(text, ev, prevEnd));
        const parent = stack[stack.length - 1];
        if (start === NONE && parent?.kind === 'seq' && parent.dash !== NONE) {
          // An empty item (`-` alone on its line) has no text but its `-`.
          const col = parent.dash - (lines[lineOf(lines, parent.dash)] as number);
          start = findDash(text, lines, Math.max(prevEnd, parent.dash), col);
          if (start !== NONE) prevEnd = start + 1;
        }
        const mark = firstOf(ev.tagStart, ev.anchorStart, ev.valueStart);
        if (doc !== null) {
          const node: ScalarNode = { kind: 'scalar', start, mark, event: ev, doc, name: null, size: 1 };
          add(node);
          anchor(node, ev);
        }
        prevEnd = Math.max(prevEnd, ev.valueEnd, ev.anchorEnd, ev.tagEnd);
        break;
      }
      case EVENT_ID.ALIAS: {
        const star = ev.anchorStart > 0 && text[ev.anchorStart - 1] === '*' ? ev.anchorStart - 1 : ev.anchorStart;
        const name = text.slice(ev.anchorStart, ev.anchorEnd);
        // An alias of a node still open (a recursive one) or of no anchor stands for itself.
        const size = anchors.get(name)?.size ?? 1;
        const node: AliasNode = { kind: 'alias', start: star, mark: ev.anchorStart, name, size };
        expanded += size - 1;
        if (bomb === null && expanded > MAX_ALIAS_EXPANSION) bomb = node;
        aliases.push(node);
        add(node);
        prevEnd = Math.max(prevEnd, ev.anchorEnd);
        break;
      }
      case EVENT_ID.POP: {
        const done = stack.pop();
        if (done !== null && done !== undefined) {
          const kids = done.kind === 'seq' ? done.items : done.kids;
          // Capped: a bomb's sizes grow tenfold per level, and only "past the limit" matters.
          done.size = Math.min(
            kids.reduce((n, k) => n + (k.size ?? 1), 1),
            Number.MAX_SAFE_INTEGER,
          );
        }
        break;
      }
    }
  }
  return { roots, keys, aliases, bomb };
}

/** Where a node's properties begin: the `&` of its anchor or the `!` of its tag, whichever is first. */
function propsStart(text: string, anchorStart: number, tagStart: number): number {
  // js-yaml's anchor range is the name only; the `&` sits just before it.
  const amp = anchorStart > 0 && text[anchorStart - 1] === '&' ? anchorStart - 1 : anchorStart;
  return earliest(amp, tagStart);
}

/** First character of a scalar's own text: the opening quote, or a block scalar's `|`/`>`. */
function scalarStart(text: string, ev: ScalarEvent, prevEnd: number): number {
  if (ev.valueStart === NONE) return NONE;
  switch (ev.style) {
    case SCALAR_STYLE.SINGLE_QUOTED:
    case SCALAR_STYLE.DOUBLE_QUOTED:
      // The value range excludes the quotes.
      return ev.valueStart > 0 && text[ev.valueStart - 1] === (ev.style === SCALAR_STYLE.SINGLE_QUOTED ? "'" : '"')
        ? ev.valueStart - 1
        : ev.valueStart;
    case SCALAR_STYLE.LITERAL_BLOCK:
    case SCALAR_STYLE.FOLDED_BLOCK:
      return blockHeader(text, ev, prevEnd);
    default:
      return ev.valueStart;
  }
}

/**
 * A block scalar's content starts on the line after its header (`|`, `>-`, `|2+ # comment`…),
 * so the header is on the line holding `valueStart - 1`; find its indicator there, after
 * everything that came before the scalar (its key, anchor and tag).
 */
function blockHeader(text: string, ev: ScalarEvent, prevEnd: number): number {
  const lineEnd = ev.valueStart > 0 ? ev.valueStart - 1 : 0;
  const lineStart = text.lastIndexOf('\n', lineEnd - 1) + 1;
  const from = Math.max(lineStart, prevEnd, ev.anchorEnd, ev.tagEnd);
  const line = text.slice(from, text[lineEnd] === '\n' ? lineEnd : ev.valueStart);
  const m = /(?:^|[ \t])([|>])[0-9+-]*[ \t]*(?:#.*)?\r?$/.exec(line);
  if (m === null) return ev.valueStart;
  return from + m.index + m[0].indexOf(m[1] as string);
}

/** The next `-` item indicator in column `col` (zero-based) at or after `from`, or NONE. */
function findDash(text: string, lines: readonly number[], from: number, col: number): number {
  if (from < 0 || col < 0) return NONE;
  for (let l = lineOf(lines, from); l < lines.length; l++) {
    const at = (lines[l] as number) + col;
    const end = l + 1 < lines.length ? (lines[l + 1] as number) - 1 : text.length;
    if (at < from || at >= end) continue;
    if (text[at] === '-' && /^[ \t\r\n]?$/.test(text[at + 1] ?? '')) return at;
  }
  return NONE;
}

function earliest(a: number, b: number): number {
  if (a === NONE) return b;
  if (b === NONE) return a;
  return Math.min(a, b);
}

function firstOf(...offsets: number[]): number {
  return offsets.find((o) => o !== NONE) ?? NONE;
}

/**
 * Resolves every scalar mapping key as js-yaml does (`1.0` is the key "1", `~` is "null"), by
 * constructing them all as one sequence per document. Aliases and collections as keys keep no
 * name (the locator never matches them; js-yaml's `{}` mappings reject complex keys anyway).
 */
function nameKeys(text: string, keys: readonly YNode[]): void {
  const byDoc = new Map<DocumentEvent, ScalarNode[]>();
  for (const k of keys) {
    if (k.kind !== 'scalar') continue;
    const list = byDoc.get(k.doc);
    if (list === undefined) byDoc.set(k.doc, [k]);
    else list.push(k);
  }
  for (const [doc, list] of byDoc) {
    let values: unknown[] | null = null;
    try {
      const seq: Event = {
        type: EVENT_ID.SEQUENCE,
        start: NONE,
        anchorStart: NONE,
        anchorEnd: NONE,
        tagStart: NONE,
        tagEnd: NONE,
        style: COLLECTION_STYLE.FLOW,
      };
      const pop: Event = { type: EVENT_ID.POP };
      const built = constructFromEvents([doc, seq, ...list.map((k) => k.event), pop, pop], {
        source: text,
        ...CONSTRUCT,
      });
      if (Array.isArray(built[0]) && built[0].length === list.length) values = built[0];
    } catch {
      values = null;
    }
    list.forEach((k, i) => {
      k.name = values !== null ? String(values[i]) : getScalarValue(text, k.event);
    });
  }
}

function yamlError(err: unknown, text: string, lines: readonly number[], tree: Tree | null): YamlParse {
  if (!(err instanceof YAMLException)) return { ok: false, pos: { line: 1, col: 1 }, reason: String(err), alias: null };
  const at = err.mark !== undefined && typeof err.mark.position === 'number' ? err.mark.position : NONE;
  const pos = at === NONE ? { line: 1, col: 1 } : toPos(text, lines, at);
  if (/^unidentified alias "/.test(err.reason)) {
    // js-yaml marks the alias name; point at its `*`.
    const node = tree?.aliases.find((a) => a.mark === at);
    if (node !== undefined)
      return { ok: false, pos: toPos(text, lines, node.start), reason: err.reason, alias: node.name };
    const name = /^unidentified alias "(.*)"$/.exec(err.reason)?.[1] ?? '';
    const star = at > 0 && text[at - 1] === '*' ? at - 1 : at;
    return { ok: false, pos: star === NONE ? pos : toPos(text, lines, star), reason: err.reason, alias: name };
  }
  if (err.reason === 'duplicated mapping key') {
    // js-yaml marks the second occurrence of the key but does not name it.
    const key = tree?.keys.find((k) => k.mark === at);
    if (key !== undefined) {
      const name =
        key.kind === 'scalar' ? ` "${getScalarValue(text, key.event)}"` : key.kind === 'alias' ? ` "*${key.name}"` : '';
      return { ok: false, pos: toPos(text, lines, key.start), reason: `duplicated mapping key${name}`, alias: null };
    }
  }
  return { ok: false, pos, reason: err.reason, alias: null };
}

/** Plain parse of another YAML file (model-config.yaml), js-yaml's default schema, no positions; throws js-yaml's error. */
export function loadYaml(text: string): unknown {
  return load(text);
}
