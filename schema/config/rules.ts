/**
 * The rules a JSON Schema cannot express: names unique across the file, dimensions unique per
 * metric, the hostname dimension last, reserved names, buckets sorted and known presets, mode
 * words. Runs on the raw document even when the schema found problems (so every problem is
 * reported at once), hence the defensive type checks.
 */
import type { MetricType } from '../types.js';
import type { Finding } from './doc.js';
import { SECTIONS, TYPES, didYouMean, getAt, isRecord, metricWhere, showValue } from './doc.js';
import { modeWords, parseModeWord } from './modes.js';
import { declarationProblems } from './declaration.js';
import { HOSTNAME_RE, METRIC_NAME_RE } from './names.js';
import { BUCKET_PRESET_NAMES, MAX_BUCKETS } from './presets.js';
import type { DocPath, Locator } from './yaml-types.js';
import { GAUGE_MERGES } from '../types.js';
import { claimExposedNames, exposureClashes } from './exposed-names.js';
import type { ExposedOwner } from './exposed-names.js';

type Emit = (path: DocPath, message: string) => void;

/** Every rule finding for the document. */
export function ruleFindings(doc: unknown, loc: Locator): Finding[] {
  const out: Finding[] = [];
  if (!isRecord(doc)) return out;
  const emit: Emit = (path, message) => {
    const pos = loc.value(path);
    out.push({ line: pos.line, col: pos.col, message });
  };
  checkCentralDimensions(doc, loc, emit);
  checkMode(doc, emit);
  const seen = new Map<string, { where: string; line: number }>();
  const exposed = new Map<string, ExposedOwner>();
  const keys = new Map<string, { where: string; line: number }>();
  const names = allNames(doc);
  for (const section of SECTIONS) {
    for (const type of TYPES) {
      const list = getAt(doc, [section, type]);
      if (!Array.isArray(list)) continue;
      list.forEach((metric, i) => {
        if (!isRecord(metric)) return;
        const where = metricWhere(doc, section, type, i);
        const base: DocPath = [section, type, i];
        checkName(metric, where, base, loc, emit, seen, `${section}.${type}`);
        checkExposure(metric, type, where, base, loc, emit, exposed);
        checkKey(metric, where, base, loc, emit, keys);
        checkDimensions(metric, where, base, emit);
        checkReserved(metric, type, where, base, emit);
        checkReplacement(metric, where, base, names, emit);
        if (type === 'histogram' && metric.buckets !== undefined)
          checkBuckets(metric.buckets, where, [...base, 'buckets'], emit);
        if (metric.merge !== undefined) checkMerge(metric.merge, type, where, [...base, 'merge'], emit);
      });
    }
  }
  return out;
}

function checkCentralDimensions(doc: Record<string, unknown>, loc: Locator, emit: Emit): void {
  const dims = doc.dimensions;
  if (!Array.isArray(dims)) return;
  const first = new Map<string, number>();
  dims.forEach((d, j) => {
    if (typeof d !== 'string') return;
    const prev = first.get(d);
    if (prev === undefined) first.set(d, j);
    else
      emit(
        ['dimensions', j],
        `dimensions: "${d}" is declared twice (first at line ${loc.value(['dimensions', prev]).line}); remove the duplicate`,
      );
  });
}

function checkMode(doc: Record<string, unknown>, emit: Emit): void {
  if (!Object.prototype.hasOwnProperty.call(doc, 'mode')) return;
  const value = doc.mode;
  const use = 'use tslog (alias log), prometheus or statsd';
  if (typeof value !== 'string' && !Array.isArray(value)) {
    emit(
      ['mode'],
      `mode: must be a sink name or a list of them, not ${showValue(value)}; ${use}, or remove mode: for the default [tslog, prometheus]`,
    );
    return;
  }
  const words = modeWords(value);
  if (words.length === 0) {
    emit(['mode'], `mode: the list is empty; ${use}, or remove mode: for the default [tslog, prometheus]`);
    return;
  }
  for (const { word, index } of words) {
    const path: DocPath = index === null ? ['mode'] : ['mode', index];
    if (typeof word !== 'string') emit(path, `mode: ${showValue(word)} is not a sink name; ${use}`);
    else if (word.trim() === '') emit(path, `mode: empty sink name; ${use}`);
    else if (parseModeWord(word) === null)
      emit(path, `mode: unknown mode "${word.trim()}"; ${modeHint(word.trim())}${use}`);
  }
}

/** `off` and `none` are words of the start flag, which can switch every sink off; a file names sinks to run. */
function modeHint(word: string): string {
  if (/^(off|none)$/i.test(word)) return 'metrics are switched off by the start flag --metrics-mode off, not here; ';
  const guess = didYouMean(word, ['tslog', 'log', 'prometheus', 'statsd']);
  return guess !== null ? `did you mean "${guess}"? ` : '';
}

function checkName(
  metric: Record<string, unknown>,
  where: string,
  base: DocPath,
  loc: Locator,
  emit: Emit,
  seen: Map<string, { where: string; line: number }>,
  list: string,
): void {
  const name = metric.name;
  if (typeof name !== 'string' || !METRIC_NAME_RE.test(name)) return; // the schema reports it
  const path = [...base, 'name'];
  const prev = seen.get(name);
  const line = loc.value(path).line;
  if (prev === undefined) seen.set(name, { where: list, line });
  else
    emit(
      path,
      `${where}: name already used by the metric in ${prev.where} at line ${prev.line}; names must be unique across the file (any section, any type), rename one`,
    );
}

/** No name of this metric's Prometheus exposition (`X_count`, `X_total`…) is another metric's. */
function checkExposure(
  metric: Record<string, unknown>,
  type: MetricType,
  where: string,
  base: DocPath,
  loc: Locator,
  emit: Emit,
  exposed: Map<string, ExposedOwner>,
): void {
  const name = metric.name;
  if (typeof name !== 'string' || !METRIC_NAME_RE.test(name)) return; // the schema reports it
  const path = [...base, 'name'];
  for (const clash of exposureClashes(name, type, exposed)) emit(path, `${where}: ${clash}`);
  claimExposedNames(name, type, ` (line ${loc.value(path).line})`, exposed);
}

/** A key names one metric: the code binds by it, so two entries with one key would be ambiguous. */
function checkKey(
  metric: Record<string, unknown>,
  where: string,
  base: DocPath,
  loc: Locator,
  emit: Emit,
  keys: Map<string, { where: string; line: number }>,
): void {
  const key = metric.key;
  if (typeof key !== 'string') return; // absent, or the schema reports it
  const path = [...base, 'key'];
  const prev = keys.get(key);
  const line = loc.value(path).line;
  if (prev === undefined) keys.set(key, { where, line });
  else
    emit(
      path,
      `${where}: key "${key}" already names ${prev.where} at line ${prev.line}; keys must be unique across the file (the server binds each to one metric), remove or change one`,
    );
}

/** Every metric name of the file, for `deprecated.replacement`. */
function allNames(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const section of SECTIONS) {
    for (const type of TYPES) {
      const list = getAt(doc, [section, type]);
      if (Array.isArray(list)) for (const m of list) if (isRecord(m) && typeof m.name === 'string') out.push(m.name);
    }
  }
  return out;
}

/** A replacement must be a metric users can move to: another one of this file. */
function checkReplacement(
  metric: Record<string, unknown>,
  where: string,
  base: DocPath,
  names: readonly string[],
  emit: Emit,
): void {
  const d = metric.deprecated;
  if (d !== undefined && typeof d !== 'string' && !isRecord(d)) {
    emit(
      [...base, 'deprecated'],
      `${where}: "deprecated" must be a notice string or a mapping {since: "X.Y", replacement: NAME}, not ${showValue(d)}`,
    );
    return;
  }
  checkHiddenSince(metric, where, base, emit);
  const r = getAt(metric, ['deprecated', 'replacement']);
  if (typeof r !== 'string' || !METRIC_NAME_RE.test(r)) return; // the schema reports it
  const path = [...base, 'deprecated', 'replacement'];
  if (r === metric.name)
    emit(path, `${where}: deprecated.replacement names the metric itself; name the metric to use instead`);
  else if (!names.includes(r)) {
    const guess = didYouMean(r, names);
    emit(
      path,
      `${where}: deprecated.replacement "${r}" is not declared in this file; ${guess !== null ? `did you mean "${guess}"?` : 'declare the new metric too'}`,
    );
  }
}

/** `hidden_since` cannot come before `since`: a metric is deprecated (with its notice) before it hides. */
function checkHiddenSince(metric: Record<string, unknown>, where: string, base: DocPath, emit: Emit): void {
  const since = getAt(metric, ['deprecated', 'since']);
  const hide = getAt(metric, ['deprecated', 'hidden_since']);
  if (typeof since !== 'string' || typeof hide !== 'string') return;
  const a = /^(\d+)\.(\d+)$/.exec(since);
  const b = /^(\d+)\.(\d+)$/.exec(hide);
  if (a === null || b === null) return; // the schema reports it
  const before = Number(b[1]) < Number(a[1]) || (Number(b[1]) === Number(a[1]) && Number(b[2]) < Number(a[2]));
  if (before)
    emit(
      [...base, 'deprecated', 'hidden_since'],
      `${where}: deprecated.hidden_since ${hide} comes before since ${since}; a metric is hidden at the earliest in the version that deprecates it`,
    );
}

/** The reserved-name rules shared with auto-detection (declaration.ts); grammar is the schema's. */
function checkReserved(
  metric: Record<string, unknown>,
  type: MetricType,
  where: string,
  base: DocPath,
  emit: Emit,
): void {
  const dims = Array.isArray(metric.dimensions) ? metric.dimensions : [];
  for (const p of declarationProblems({ name: metric.name, type, dimensions: dims }, false)) {
    if (p.kind === 'reserved')
      emit(p.at === 'name' ? [...base, 'name'] : [...base, 'dimensions', p.at], `${where}: ${p.message}`);
  }
}

function checkDimensions(metric: Record<string, unknown>, where: string, base: DocPath, emit: Emit): void {
  const dims = metric.dimensions;
  if (!Array.isArray(dims)) return;
  const seen = new Set<string>();
  const last = dims.length - 1;
  dims.forEach((d, j) => {
    if (typeof d !== 'string') return;
    const path = [...base, 'dimensions', j];
    if (seen.has(d)) emit(path, `${where}: dimension "${d}" listed twice; remove the duplicate`);
    seen.add(d);
    if (HOSTNAME_RE.test(d) && j !== last) {
      emit(
        path,
        `${where}: dimension "${d}" must be the last one (the hostname is filled in automatically and rendered last); move it to the end of the list`,
      );
    }
  });
}

function checkBuckets(buckets: unknown, where: string, path: DocPath, emit: Emit): void {
  const presets = BUCKET_PRESET_NAMES.join(', ');
  if (typeof buckets === 'string') {
    if (BUCKET_PRESET_NAMES.includes(buckets)) return;
    const guess = didYouMean(buckets, BUCKET_PRESET_NAMES);
    const hint = guess !== null ? `did you mean "${guess}"? Presets` : 'use a list of numbers or one of';
    emit(path, `${where}: unknown bucket preset "${buckets}"; ${hint}: ${presets}`);
    return;
  }
  if (!Array.isArray(buckets)) {
    emit(
      path,
      `${where}: "buckets" must be a list of numbers or a preset name (${presets}), not ${showValue(buckets)}`,
    );
    return;
  }
  if (buckets.length === 0) {
    emit(
      path,
      `${where}: "buckets" is empty; list at least one upper bound, or remove it to use the unit's default preset`,
    );
    return;
  }
  if (buckets.length > MAX_BUCKETS) {
    // One problem, not one per bound out of order in a list of thousands.
    emit(
      path,
      `${where}: "buckets" has ${buckets.length} bounds, more than ${MAX_BUCKETS} (every series renders a line per bound in each scrape); keep the bounds that tell latencies apart`,
    );
    return;
  }
  let max = -Infinity;
  const seen = new Set<number>();
  buckets.forEach((b, k) => {
    const itemPath = [...path, k];
    if (typeof b !== 'number') {
      emit(itemPath, `${where}: bucket ${showValue(b)} is not a number; write plain numbers such as 0.5 or 100`);
      return;
    }
    if (!Number.isFinite(b)) {
      const shown = Number.isNaN(b) ? '.nan' : b > 0 ? '.inf' : '-.inf';
      emit(itemPath, `${where}: bucket ${shown} is not a finite number; +Inf is always added, remove it`);
      return;
    }
    if (seen.has(b)) emit(itemPath, `${where}: bucket ${b} listed twice; remove the duplicate`);
    else if (b < max)
      emit(itemPath, `${where}: buckets must be in increasing order, but ${b} comes after ${max}; sort the list`);
    seen.add(b);
    max = Math.max(max, b);
  });
}

/** `merge:` is a gauge's, and one of the modes (a typo gets a did-you-mean). */
function checkMerge(merge: unknown, type: string, where: string, path: DocPath, emit: Emit): void {
  if (type !== 'gauge') {
    // Histograms refuse the key in the schema already; a counter's is caught here.
    if (type === 'counter')
      emit(
        path,
        `${where}: "merge" only applies to gauges (counters and histograms always sum across processes); remove it`,
      );
    return;
  }
  if (typeof merge !== 'string' || (GAUGE_MERGES as readonly string[]).includes(merge)) return;
  const guess = didYouMean(merge, GAUGE_MERGES);
  const list = GAUGE_MERGES.join(', ');
  emit(
    path,
    `${where}: unknown merge mode "${merge}"; ${guess !== null ? `did you mean "${guess}"? Modes` : 'use one of'}: ${list}`,
  );
}
