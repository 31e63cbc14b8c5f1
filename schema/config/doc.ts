/**
 * Small helpers over the raw (not yet validated) YAML document: safe access by path, and the
 * words used in messages to say where a problem is ("metric "Foo" in ts_metrics.counter").
 */
import { METRIC_TYPES } from '../types.js';
import type { MetricType, Section } from '../types.js';
import type { DocPath } from './yaml-types.js';
import { excerpt } from '../files/model-file.js';

/** Longest name quoted whole in a message (characters): four times the longest valid name (names.ts MAX_NAME_CHARS, 256). */
const QUOTED_NAME_CHARS = 1024;

/**
 * A name of the file in double quotes, as messages quote it; one too long to be valid is cut to
 * an escaped excerpt with `…(N more)`, so a 900,000-character name does not make a 900 KB line.
 */
export function quoted(name: string): string {
  return name.length <= QUOTED_NAME_CHARS ? `"${name}"` : excerpt(name, 64);
}

/** The two metric sections, in the order the config lists them. */
export const SECTIONS: readonly Section[] = ['ts_metrics', 'model_metrics'];
/** The metric type keys, in the order TorchServe documents them. */
export const TYPES: readonly MetricType[] = METRIC_TYPES;

/** A problem before it is tied to a file: where and what. */
export interface Finding {
  readonly line: number;
  readonly col: number;
  readonly message: string;
}

/** True for a plain mapping (not null, not a list). */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at `path`, or undefined. */
export function getAt(doc: unknown, path: DocPath): unknown {
  let cur: unknown = doc;
  for (const seg of path) {
    if (Array.isArray(cur) && typeof seg === 'number') cur = cur[seg];
    else if (isRecord(cur) && typeof seg === 'string' && Object.prototype.hasOwnProperty.call(cur, seg)) cur = cur[seg];
    else return undefined;
  }
  return cur;
}

/** True when `s` is a section key: the two metric sections, or the self-metrics' `tsserve_metrics`. */
export function isSection(s: unknown): s is Section | 'tsserve_metrics' {
  return s === 'ts_metrics' || s === 'model_metrics' || s === 'tsserve_metrics';
}

/** True when `s` is one of the type keys. */
export function isType(s: unknown): s is MetricType {
  return s === 'counter' || s === 'gauge' || s === 'histogram';
}

/** `metric "Foo" in ts_metrics.counter`, or `metric #2 in ...` when it has no usable name. */
export function metricWhere(doc: unknown, section: string, type: string, index: number): string {
  const name = getAt(doc, [section, type, index, 'name']);
  const label = typeof name === 'string' && name !== '' ? quoted(name) : `#${index + 1}`;
  return `metric ${label} in ${section}.${type}`;
}

/** Names the part of the file a path points into, for the start of a message. */
export function whereOf(doc: unknown, path: DocPath): string {
  const [a, b, c] = path;
  if (a === undefined) return 'top level';
  if (isSection(a) && typeof b === 'string') {
    if (typeof c === 'number' && isType(b)) return metricWhere(doc, a, b, c);
    return `${a}.${b}`;
  }
  return String(a);
}

/** Characters of a string value a message quotes. */
const SHOWN_CHARS = 60;

/** How a value reads in a message: `"abc"`, `12`, `a list`, `a mapping`, `null`. */
export function showValue(v: unknown): string {
  // A long string (a file that is not YAML at all reads as one scalar) is shown by its start.
  if (typeof v === 'string')
    return v.length > SHOWN_CHARS
      ? `${JSON.stringify(v.slice(0, SHOWN_CHARS))}… (${v.length} characters)`
      : JSON.stringify(v);
  if (v === null || v === undefined) return 'empty (null)';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return String(v);
}

/** The closest candidate by edit distance, if close enough to be a plausible typo. */
export function didYouMean(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = distance(word.toLowerCase(), c.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = c;
    }
  }
  return best !== null && bestD <= Math.max(1, Math.floor(word.length / 3)) ? best : null;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j] as number;
      row[j] = Math.min((row[j] as number) + 1, (row[j - 1] as number) + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length] as number;
}
