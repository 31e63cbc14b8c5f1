/**
 * What a parse of metrics.yaml answers, apart from the js-yaml adapter that produces it: the
 * value with a locator of its keys and values, or the YAML error with its position.
 */
import type { SourcePos } from '../types.js';

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
  | {
      readonly ok: true;
      readonly value: unknown;
      readonly locator: Locator;
      readonly duplicates: readonly DuplicateKey[];
    }
  | {
      readonly ok: false;
      readonly pos: SourcePos;
      readonly reason: string;
      readonly alias: string | null;
      readonly expansion?: ExpansionProblem;
    };

/**
 * A key given again in one mapping. YAML forbids it, but it is a problem like any other: the
 * value is built with the last one kept, so every other problem of the file is found too.
 */
export interface DuplicateKey {
  /** Where the repeated key is. */
  readonly pos: SourcePos;
  readonly key: string;
  /** Line of the key's first occurrence. */
  readonly firstLine: number;
  /** The mapping holding both. */
  readonly path: DocPath;
}

/** An alias that made the document grow past MAX_ALIAS_EXPANSION nodes. */
export interface ExpansionProblem {
  /** The anchor name, without the `*`. */
  readonly alias: string;
  /** How many nodes this one alias brings in. */
  readonly nodes: number;
}
