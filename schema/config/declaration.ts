/**
 * The naming rules of one metric declaration, in one place: the loader applies them to every
 * metric of metrics.yaml, and both caches to every auto-detected metric (the worker when a
 * handler first uses a name, the frontend again when a worker declares it), so a name that the
 * yaml would refuse can never reach a sink by the side door.
 */
import type { MetricType } from '../types.js';
import { quoted, showValue } from './doc.js';
import {
  DEFAULT_MAX_DIMENSIONS,
  HOSTNAME_RE,
  LABEL_NAME_RE,
  MAX_NAME_CHARS,
  METRIC_NAME_RE,
  RESERVED_PREFIX,
  RUNTIME_PREFIXES,
  suggestName,
} from './names.js';

/** A declaration to check; fields are `unknown` where they come from handler code or IPC. */
export interface Declaration {
  readonly name: unknown;
  readonly type: MetricType;
  readonly dimensions: readonly unknown[];
}

/**
 * One broken rule. `at` is `name` or the index of the dimension. `kind` lets the loader skip
 * what its JSON Schema already reported (`grammar`) or reports with a position (`duplicate`).
 */
export interface DeclarationProblem {
  readonly at: 'name' | number;
  readonly kind: 'grammar' | 'reserved' | 'duplicate';
  readonly message: string;
}

/** Metric names with this prefix are Prometheus' own (as `__` label names are). */
const PROMETHEUS_PREFIX = '__';

/**
 * Every rule `decl` breaks, in order (name first, then dimensions). `autoDetected` adds the one
 * rule a yaml entry is exempt from: it may not name an automatic label (the hostname), which
 * the yaml may declare last but an auto-detected metric gets appended anyway. Past
 * `maxDimensions` dimensions (`limits.max_dimensions_per_metric`) the one problem is placed at
 * the first dimension too many, and the dimensions past the bound are not checked one by one.
 */
export function declarationProblems(
  decl: Declaration,
  autoDetected: boolean,
  maxDimensions = DEFAULT_MAX_DIMENSIONS,
): DeclarationProblem[] {
  const out: DeclarationProblem[] = [];
  const name = decl.name;
  const runtime = typeof name === 'string' ? RUNTIME_PREFIXES.find((p) => name.startsWith(p)) : undefined;
  if (typeof name === 'string' && name.length > MAX_NAME_CHARS) {
    out.push({
      at: 'name',
      kind: 'reserved',
      message: `name has ${name.length} characters, more than ${MAX_NAME_CHARS}; shorten it`,
    });
  } else if (typeof name !== 'string' || name === '') {
    out.push({
      at: 'name',
      kind: 'grammar',
      message: '"name" is empty; give the metric a name matching [a-zA-Z_:][a-zA-Z0-9_:]*',
    });
  } else if (!METRIC_NAME_RE.test(name)) {
    out.push({
      at: 'name',
      kind: 'grammar',
      message: `name ${quoted(name)} is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. ${quoted(suggestName(name, false))}`,
    });
  } else if (name.startsWith(RESERVED_PREFIX)) {
    out.push({
      at: 'name',
      kind: 'reserved',
      message: `names starting with "${RESERVED_PREFIX}" are reserved for tsserve's self-metrics; rename it (e.g. "${suggestName(name, false)}")`,
    });
  } else if (runtime !== undefined) {
    out.push({
      at: 'name',
      kind: 'reserved',
      message: `names starting with "${runtime}" are reserved for the runtime families the Prometheus sink exposes (process and Node.js metrics); rename it (e.g. "${name.slice(runtime.length)}")`,
    });
  } else if (name.startsWith(PROMETHEUS_PREFIX)) {
    out.push({
      at: 'name',
      kind: 'reserved',
      message: `names starting with "${PROMETHEUS_PREFIX}" are reserved by Prometheus; rename it (e.g. "${suggestName(name, false)}")`,
    });
  }
  const count = decl.dimensions.length;
  if (count > maxDimensions) {
    out.push({
      at: maxDimensions,
      kind: 'reserved',
      message: `${count} dimensions, more than ${maxDimensions} (limits.max_dimensions_per_metric); each is a label on every series, log line and StatsD packet`,
    });
  }
  const seen = new Set<string>();
  decl.dimensions.slice(0, maxDimensions).forEach((d, i) => {
    if (typeof d !== 'string') {
      // Described, not String()ed: a handler's object reads "[object Object]", a long list fills a log line.
      out.push({ at: i, kind: 'grammar', message: `dimension ${i + 1} is ${showValue(d)}, not a string` });
      return;
    }
    if (d.length > MAX_NAME_CHARS) {
      out.push({
        at: i,
        kind: 'reserved',
        message: `dimension ${i + 1} has ${d.length} characters, more than ${MAX_NAME_CHARS}; shorten it`,
      });
      return;
    }
    if (!LABEL_NAME_RE.test(d)) {
      out.push({ at: i, kind: 'grammar', message: labelGrammar(d) });
      return;
    }
    if (seen.has(d))
      out.push({ at: i, kind: 'duplicate', message: `dimension "${d}" listed twice; remove the duplicate` });
    seen.add(d);
    if (decl.type === 'histogram' && d === 'le') {
      out.push({
        at: i,
        kind: 'reserved',
        message: 'dimension "le" is reserved for histogram bucket bounds in Prometheus; rename it',
      });
    }
    if (d === 'quantile') {
      out.push({
        at: i,
        kind: 'reserved',
        message: 'dimension "quantile" is reserved for summary quantiles in Prometheus; rename it',
      });
    }
    if (autoDetected && HOSTNAME_RE.test(d)) {
      out.push({
        at: i,
        kind: 'reserved',
        message: `dimension "${d}" is the automatic hostname label, filled in by the server; leave it out`,
      });
    }
  });
  return out;
}

function labelGrammar(v: string): string {
  if (v === '') return 'empty dimension name; remove it or give it a name';
  const why = v.startsWith('__')
    ? 'names starting with __ are reserved by Prometheus'
    : 'use letters, digits and _, not starting with a digit';
  const s = suggestName(v, true);
  return `dimension ${quoted(v)} is not a valid label name (${why})${LABEL_NAME_RE.test(s) ? `, e.g. ${quoted(s)}` : ''}`;
}
