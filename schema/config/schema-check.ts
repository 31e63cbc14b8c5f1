/**
 * The ajv adapter: checks the document against schema/metrics.schema.json (all errors) and
 * turns each ajv error into a specific message placed at the offending key or value.
 * `mode` and `buckets` errors are left to rules.ts: their schema uses anyOf (for editor
 * completion), whose raw errors would be noise, and the rules say exactly what is wrong.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Ajv } from 'ajv';
import type { ErrorObject } from 'ajv';
import type { Finding } from './doc.js';
import { getAt, isSection, quoted, showValue, whereOf, didYouMean } from './doc.js';
import { LABEL_NAME_RE, suggestName } from './names.js';
import type { DocPath, Locator } from './yaml-types.js';

/** Where the schema lives: read from the source tree (dist/schema/config/ is three levels below the repo). */
const SCHEMA_FILE = resolve(import.meta.dirname, '..', '..', '..', 'schema', 'metrics.schema.json');
const schemaJson = JSON.parse(readFileSync(SCHEMA_FILE, 'utf8')) as {
  readonly properties: Readonly<Record<string, unknown>>;
};

/** The JSON Schema object, as shipped in schema/metrics.schema.json. */
export const METRICS_SCHEMA: Readonly<Record<string, unknown>> = schemaJson;

const ajv = new Ajv({ allErrors: true, strict: true });
const validate = ajv.compile(schemaJson);

const TOP_KEYS = Object.keys(schemaJson.properties);
const METRIC_FIELDS = ['name', 'key', 'unit', 'dimensions', 'help', 'help_verbatim', 'deprecated', 'hidden', 'merge'];

/** Hints for keys people carry over from TorchServe, vLLM or other metric configs. */
const TOP_HINTS: Readonly<Record<string, string>> = {
  metrics_format:
    'it was removed in TorchServe 0.8 (a config.properties option, never a metrics.yaml key) and is not read; use mode: prometheus (or tslog, statsd)',
  metrics_mode: 'use mode: (e.g. mode: prometheus) in metrics.yaml',
  metrics: 'declare metrics under ts_metrics: or model_metrics:',
};
/** What to write for a missing required key (a metric's name or unit, a deprecation's since). */
const REQUIRED_EXAMPLES: Readonly<Record<string, string>> = {
  name: 'e.g. name: MyMetric',
  unit: 'e.g. unit: Count, unit: Milliseconds or unit: Percent',
  since: 'e.g. since: "0.1", the quoted version that deprecated the metric',
};
const FIELD_HINTS: Readonly<Record<string, string>> = {
  description: 'use help: for the description',
  labels: 'use dimensions: for label names',
  type: 'the type is the list the metric sits in (counter:, gauge: or histogram:)',
  buckets: 'buckets only apply to histograms; remove it or move the metric under histogram:',
  merge: 'merge only applies to gauges (counters and histograms always sum); remove it',
};

/**
 * Why a limit has a ceiling: a cap far above it bounds nothing (1e12 series, or a worker
 * buffering 2^30 points, 12 GiB, before its first flush), so the hint says what it costs.
 */
const LIMIT_HINTS: Readonly<Record<string, string>> = {
  max_series_per_metric:
    'each series is held in every sink and rendered on every scrape; a dimension with more values than that (a request id, a user id) is unbounded: drop it from the metric',
  max_points_per_flush:
    'a worker buffers this many datapoints (12 bytes each) before it flushes, and holds as many while the IPC channel is congested',
  max_auto_detected_metrics: 'each is a family in every sink; declare the metrics you keep in metrics.yaml',
  max_dimensions_per_metric:
    'each dimension is a label on every series, log line and StatsD packet; fold what varies into fewer labels',
};

/** Checks `doc` against the schema; one finding per real problem, in no particular order. */
export function schemaFindings(doc: unknown, loc: Locator): Finding[] {
  if (validate(doc)) return [];
  const out: Finding[] = [];
  for (const err of validate.errors ?? []) {
    const f = translate(doc, loc, err);
    if (f !== null) out.push(f);
  }
  return out;
}

function decodePath(instancePath: string): (string | number)[] {
  if (instancePath === '') return [];
  return instancePath
    .slice(1)
    .split('/')
    .map((s) => {
      const seg = s.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^(0|[1-9][0-9]*)$/.test(seg) ? Number(seg) : seg;
    });
}

/** True for paths whose problems rules.ts reports itself. */
function ruleOwned(path: DocPath): boolean {
  return path[0] === 'mode' || (isSection(path[0]) && path[3] === 'buckets');
}

function translate(doc: unknown, loc: Locator, err: ErrorObject): Finding | null {
  const path = decodePath(err.instancePath);
  if (err.keyword === 'anyOf' || err.keyword === 'oneOf' || ruleOwned(path)) return null;
  // `deprecated` is a string or a mapping: the branch it is not would report a type error; rules.ts says it once.
  if (err.keyword === 'type' && path.length === 4 && isSection(path[0]) && path[3] === 'deprecated') return null;
  // A top-level scalar (`mode`, `model_metrics_auto_detect`) needs no "where:" lead.
  const where = whereOf(doc, path);
  const pre = path.length === 1 && !isSection(path[0]) ? '' : `${where}: `;
  const at = (p: DocPath, key = false): Finding => {
    const pos = key ? loc.key(p) : loc.value(p);
    return { line: pos.line, col: pos.col, message: '' };
  };
  const make = (p: DocPath, message: string, key = false): Finding => ({ ...at(p, key), message });
  const value = getAt(doc, path);
  const params = err.params as Record<string, unknown>;

  switch (err.keyword) {
    case 'additionalProperties': {
      const prop = String(params.additionalProperty);
      const keyPath = [...path, prop];
      if (path.length === 0) {
        const hint = TOP_HINTS[prop] ?? hintFor(prop, TOP_KEYS);
        return make(keyPath, `unknown top-level key "${prop}"; ${hint}`, true);
      }
      if (path.length === 1 && isSection(path[0])) {
        const extra = prop === 'summary' ? ' (summaries are not supported; declare a histogram)' : '';
        return make(keyPath, `${pre}unknown metric type "${prop}"; use counter, gauge or histogram${extra}`, true);
      }
      if (path.length === 3 && isSection(path[0])) {
        const allowed = path[1] === 'histogram' ? [...METRIC_FIELDS, 'buckets'] : METRIC_FIELDS;
        const hint = FIELD_HINTS[prop] ?? hintFor(prop, allowed);
        return make(keyPath, `${pre}unknown field "${prop}"; ${hint}`, true);
      }
      if (path.length === 4 && isSection(path[0]) && path[3] === 'deprecated') {
        return make(
          keyPath,
          `${pre}unknown field "deprecated.${prop}"; ${hintFor(prop, ['since', 'replacement', 'hidden_since'])}`,
          true,
        );
      }
      const parent = getAt(schemaJson.properties, [String(path[0]), 'properties']);
      const allowed = typeof parent === 'object' && parent !== null ? Object.keys(parent) : [];
      return make(keyPath, `${where}: unknown field "${prop}"; ${hintFor(prop, allowed)}`, true);
    }
    case 'required': {
      const missing = String(params.missingProperty);
      const example = REQUIRED_EXAMPLES[missing] ?? `e.g. ${missing}: …`;
      return make(path, `${pre}missing "${missing}"; add it (${example})`);
    }
    case 'type': {
      if (path.length === 0) {
        return make(
          path,
          `the top level must be a mapping (keys such as ts_metrics:, model_metrics:), not ${showValue(value)}`,
        );
      }
      const wanted = typeWords(String(params.type));
      // YAML reads `since: 0.1` as a number (and `0.10` as 0.1): a version must be quoted.
      const quote =
        path[path.length - 1] === 'since' && typeof value === 'number'
          ? `; quote it ("${String(value)}") so YAML keeps it a version`
          : '';
      return make(path, `${pre}${fieldWords(path)} must be ${wanted}, not ${showValue(value)}${quote}`);
    }
    case 'pattern':
    case 'minLength':
      return make(path, nameMessage(pre, path, value));
    case 'enum': {
      const allowed = (params.allowedValues as unknown[]).map(String);
      return make(path, `${pre}${fieldWords(path)} must be one of ${allowed.join(', ')}, not ${showValue(value)}`);
    }
    case 'minimum':
    case 'maximum': {
      const limit = String(params.limit);
      const rel = err.keyword === 'minimum' ? 'at least' : 'at most';
      const hint = err.keyword === 'maximum' && path[0] === 'limits' ? LIMIT_HINTS[String(path[1])] : undefined;
      return make(
        path,
        `${pre}${fieldWords(path)} must be ${rel} ${limit}, not ${showValue(value)}${hint === undefined ? '' : `; ${hint}`}`,
      );
    }
    default:
      return make(path, `${pre}${fieldWords(path)} ${err.message ?? 'is invalid'}`);
  }
}

function hintFor(prop: string, allowed: readonly string[]): string {
  const guess = didYouMean(prop, allowed);
  const list = `allowed: ${allowed.join(', ')}`;
  return guess !== null ? `did you mean "${guess}"? (${list})` : `remove it (${list})`;
}

function typeWords(types: string): string {
  const first = types.split(',').find((t) => t !== 'null') ?? types;
  const words: Record<string, string> = {
    array: 'a list',
    object: 'a mapping',
    string: 'a string',
    integer: 'a whole number',
    number: 'a number',
    boolean: 'true or false',
  };
  return words[first] ?? first;
}

/** `"unit"`, `"statsd.port"`, or `item 2 of "dimensions"`. */
function fieldWords(path: DocPath): string {
  const last = path[path.length - 1];
  if (typeof last === 'number') return `item ${last + 1} of "${String(path[path.length - 2])}"`;
  return `"${String(last)}"`;
}

function nameMessage(pre: string, path: DocPath, value: unknown): string {
  const last = path[path.length - 1];
  const isDimItem = typeof last === 'number' && path[path.length - 2] === 'dimensions';
  if (isDimItem) {
    const v = String(value);
    if (v === '') return `${pre}empty dimension name; remove it or give it a name`;
    const why = v.startsWith('__')
      ? 'names starting with __ are reserved by Prometheus'
      : 'use letters, digits and _, not starting with a digit';
    const kind = path.length === 2 ? 'dimension name' : 'label name';
    const suggestion = LABEL_NAME_RE.test(suggestName(v, true)) ? `, e.g. ${quoted(suggestName(v, true))}` : '';
    return `${pre}dimension ${quoted(v)} is not a valid ${kind} (${why})${suggestion}`;
  }
  if (last === 'name') {
    const v = String(value);
    if (v === '') return `${pre}"name" is empty; give the metric a name matching [a-zA-Z_:][a-zA-Z0-9_:]*`;
    return `${pre}name ${quoted(v)} is not a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); use letters, digits, _ and :, e.g. ${quoted(suggestName(v, false))}`;
  }
  if (last === 'key')
    return `${pre}key ${quoted(String(value))} is not a valid key; use dotted lowercase words, e.g. "llm.time_to_first_token"`;
  if (last === 'unit' && typeof value === 'string' && value.trim() === '') {
    return `${pre}"unit" ${value === '' ? 'is empty' : 'holds only blanks'}; write the unit, e.g. Count, Milliseconds or Percent`;
  }
  if ((last === 'since' || last === 'hidden_since') && path[path.length - 2] === 'deprecated') {
    return `${pre}"${last}" must be a version MAJOR.MINOR such as "0.1" (no patch, no leading zeros), not ${showValue(value)}`;
  }
  if (value === '') return `${pre}${fieldWords(path)} is empty; give it a value`;
  return `${pre}${fieldWords(path)} is not valid (${showValue(value)})`;
}
