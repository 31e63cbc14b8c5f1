/**
 * The self-metrics' section of metrics.yaml, `tsserve_metrics:`. The bundled metrics.yaml's
 * section is the built-in declaration (`selfMetricSpecs` reads it); a user's file may carry the
 * section too (a copy of the bundled file does), and then each entry it lists must be the
 * built-in one in type, unit and dimensions. Help may differ and is
 * not used: what a self-metric counts is the server's code, which the built-in help describes.
 */
import * as fs from 'fs';
import type { MetricSpec, MetricType } from '../types.js';
import type { Finding } from './doc.js';
import { TYPES, didYouMean, getAt, isRecord, metricWhere, quoted, showValue } from './doc.js';
import { deepFreeze } from './freeze.js';
import { metricSpec } from './normalize.js';
import type { DocPath, Locator } from './yaml-types.js';
import { parseYaml } from './yaml-source.js';
import { defaultMetricsConfigPath } from './bundled.js';
import { SELF_METRICS } from '../metric-catalog.js';

/** The top-level key of the self-metrics' section. */
export const SELF_SECTION = 'tsserve_metrics';

/** The fields a self-metric's entry may have; the others (key, buckets, merge, deprecated, hidden) would change a fixed metric. */
const SELF_FIELDS: readonly string[] = ['name', 'unit', 'dimensions', 'help'];

/** Dimensions a message lists before it only counts the rest. */
const SHOWN_DIMENSIONS = 8;

/** The hint every refusal ends with. */
const FIXED =
  "(a self-metric's type, unit and dimensions are fixed by the server; only its help may differ, and the built-in help is shown)";

/**
 * The section's entries as specs, type lists in key order and entries in file order, of a
 * document whose section passed the schema. They are `ts_metrics` specs: the sinks render a
 * self-metric as one of the frontend's own metrics.
 */
export function selfSectionSpecs(doc: unknown): MetricSpec[] {
  const sec = getAt(doc, [SELF_SECTION]);
  const out: MetricSpec[] = [];
  if (!isRecord(sec)) return out;
  for (const type of Object.keys(sec)) {
    const list = sec[type];
    if (!TYPES.includes(type as MetricType) || !Array.isArray(list)) continue;
    for (const m of list) if (isRecord(m)) out.push(metricSpec(m, 'ts_metrics', type as MetricType, null));
  }
  return out;
}

/**
 * The built-in self-metric specs, in `order`, from the `tsserve_metrics` section of `file` (the
 * bundled metrics.yaml). Throws when the file cannot be read or parsed, or its section does not
 * declare exactly the names of `order`: an install whose metrics.yaml is not the one its code
 * was built with.
 */
export function builtInSelfSpecs(file: string, order: readonly string[]): readonly MetricSpec[] {
  const why = `the bundled ${file} declares the self-metrics (its ${SELF_SECTION}: section); restore it from the release`;
  const parsed = parseYaml(fs.readFileSync(file, 'utf8'));
  if (!parsed.ok) throw new Error(`${file}:${parsed.pos.line}:${parsed.pos.col}: ${parsed.reason}; ${why}`);
  const specs = new Map(selfSectionSpecs(parsed.value).map((s) => [s.name, s]));
  const missing = order.filter((n) => !specs.has(n));
  const unknown = [...specs.keys()].filter((n) => !order.includes(n));
  if (missing.length > 0 || unknown.length > 0)
    throw new Error(
      `${file}: ${SELF_SECTION} lacks [${missing.join(', ')}] and declares unknown [${unknown.join(', ')}]; ${why}`,
    );
  return deepFreeze(order.map((n) => specs.get(n) as MetricSpec));
}

let selfSpecs: readonly MetricSpec[] | null = null;

/**
 * The self-metrics' specs in `SELF_METRICS` order (schema/metric-catalog.ts, whose names type
 * the bindings), from the bundled metrics.yaml's `tsserve_metrics` section, read at the first
 * call (at start-up). Throws when that section does not declare exactly `SELF_METRICS`.
 */
export function selfMetricSpecs(): readonly MetricSpec[] {
  selfSpecs ??= builtInSelfSpecs(defaultMetricsConfigPath(), SELF_METRICS);
  return selfSpecs;
}

/** Whether the document has a self-metrics' section to check. */
export function hasSelfSection(doc: unknown): boolean {
  return getAt(doc, [SELF_SECTION]) !== undefined;
}

/** Every way the section of `doc` departs from the built-in declarations `builtIn`, placed at the offending value. */
export function selfSectionFindings(doc: unknown, loc: Locator, builtIn: readonly MetricSpec[]): Finding[] {
  const out: Finding[] = [];
  const sec = getAt(doc, [SELF_SECTION]);
  if (!isRecord(sec)) return out;
  const emit = (path: DocPath, message: string, key = false): void => {
    const pos = key ? loc.key(path) : loc.value(path);
    out.push({ line: pos.line, col: pos.col, message });
  };
  const byName = new Map(builtIn.map((s) => [s.name, s]));
  const first = new Map<string, number>();
  for (const type of TYPES) {
    const list = sec[type];
    if (!Array.isArray(list)) continue;
    list.forEach((m, i) => {
      if (!isRecord(m) || typeof m.name !== 'string') return; // the schema reports it
      const base: DocPath = [SELF_SECTION, type, i];
      const where = metricWhere(doc, SELF_SECTION, type, i);
      const want = byName.get(m.name);
      if (want === undefined) {
        const guess = didYouMean(m.name, [...byName.keys()]);
        const hint = guess !== null ? `did you mean "${guess}"?` : `they are ${[...byName.keys()].join(', ')};`;
        emit(
          [...base, 'name'],
          `${where}: not a self-metric of this server; ${hint} declare a metric of your own under ts_metrics: (without the tsserve_ prefix)`,
        );
        return;
      }
      const line = loc.value([...base, 'name']).line;
      const prev = first.get(m.name);
      if (prev !== undefined) {
        emit([...base, 'name'], `${where}: declared twice in ${SELF_SECTION} (first at line ${prev}); remove one`);
        return;
      }
      first.set(m.name, line);
      if (type !== want.type)
        emit(
          [...base, 'name'],
          `${where}: the server records it as a ${want.type}, not a ${type}; move it under ${SELF_SECTION}.${want.type}: ${FIXED}`,
        );
      for (const field of Object.keys(m))
        if (!SELF_FIELDS.includes(field))
          emit([...base, field], `${where}: "${field}" cannot be set on a self-metric; remove it ${FIXED}`, true);
      if (typeof m.unit === 'string' && m.unit !== want.unit)
        emit([...base, 'unit'], `${where}: unit must be ${want.unit}, not ${showValue(m.unit)} ${FIXED}`);
      const wanted = want.hostLabel === null ? [...want.dimensions] : [...want.dimensions, want.hostLabel];
      const got = Array.isArray(m.dimensions) ? m.dimensions : [];
      if (got.length !== wanted.length || got.some((d, j) => d !== wanted[j]))
        emit(
          [...base, 'dimensions'],
          `${where}: dimensions must be ${listText(wanted)}, not ${listText(got)} ${FIXED}`,
        );
    });
  }
  return out;
}

/** `["reason", "Hostname"]`, each item bounded, past SHOWN_DIMENSIONS items only counted. */
function listText(items: readonly unknown[]): string {
  const shown = items.slice(0, SHOWN_DIMENSIONS).map((d) => (typeof d === 'string' ? quoted(d) : showValue(d)));
  const more = items.length > SHOWN_DIMENSIONS ? [`…(${items.length - SHOWN_DIMENSIONS} more)`] : [];
  return `[${[...shown, ...more].join(', ')}]`;
}
