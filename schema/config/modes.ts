/** Parsing of the `mode:` value: a name, a comma list or a YAML list, case-insensitive. */
import type { SinkMode } from '../types.js';

/** Used when `mode` is absent: unlike TorchServe (log only) we can run both sinks at once. */
export const DEFAULT_MODES: readonly SinkMode[] = ['tslog', 'prometheus'];

const ALIASES: Readonly<Record<string, SinkMode>> = {
  tslog: 'tslog',
  log: 'tslog',
  prometheus: 'prometheus',
  statsd: 'statsd',
  otlp: 'otlp',
};

/** One mode word: TorchServe's `log` is `tslog`; case and surrounding blanks are ignored. */
export function parseModeWord(word: string): SinkMode | null {
  const w = word.trim().toLowerCase();
  return Object.prototype.hasOwnProperty.call(ALIASES, w) ? (ALIASES[w] as SinkMode) : null;
}

/** Splits a `mode` string or list into words, each with its list index (null for a string). */
export function modeWords(value: unknown): { readonly word: unknown; readonly index: number | null }[] {
  if (typeof value === 'string') return value.split(',').map((word) => ({ word, index: null }));
  if (Array.isArray(value)) {
    const out: { word: unknown; index: number | null }[] = [];
    value.forEach((item, index) => {
      if (typeof item === 'string') for (const word of item.split(',')) out.push({ word, index });
      else out.push({ word: item, index });
    });
    return out;
  }
  return [];
}

/** The modes of a validated `mode` value, deduplicated, in the order written. */
export function parseModes(value: unknown): readonly SinkMode[] {
  if (value === undefined) return DEFAULT_MODES;
  const out: SinkMode[] = [];
  for (const { word } of modeWords(value)) {
    const m = typeof word === 'string' ? parseModeWord(word) : null;
    if (m !== null && !out.includes(m)) out.push(m);
  }
  return out;
}
