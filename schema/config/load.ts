/**
 * The metrics.yaml loader: read, parse (js-yaml, with positions), validate (JSON Schema, then
 * the rules), normalize, freeze. Never throws; reports every problem at once, in file order.
 */
import * as fs from 'fs';
import * as path from 'path';
import { TextDecoder } from 'util';
import type { ConfigProblem, LoadResult, SourcePos } from '../types.js';
import type { Finding } from './doc.js';
import { isRecord, whereOf } from './doc.js';
import { deepFreeze } from './freeze.js';
import { normalize } from './normalize.js';
import { ruleFindings } from './rules.js';
import { schemaFindings } from './schema-check.js';
import type { Locator } from './yaml-types.js';
import { MAX_ALIAS_EXPANSION, parseYaml } from './yaml-source.js';
import { SELF_SECTION, hasSelfSection, selfMetricSpecs, selfSectionFindings } from './self-section.js';

export { METRICS_PROFILES, defaultMetricsConfigPath, profileConfigPath } from './bundled.js';

/**
 * Largest metrics.yaml accepted, in bytes: 1 MiB, what a Kubernetes ConfigMap (where the file
 * usually comes from) holds. The repo's file is 24 KiB for 80 metrics; a bigger file declares a
 * metric per value, and every worker would hold all of it.
 */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** Reads and validates a metrics.yaml file. Problems name `file` exactly as passed. */
export function loadMetricsConfig(file: string): LoadResult {
  let text: string;
  try {
    const read = readBounded(file, MAX_CONFIG_BYTES);
    if (!Buffer.isBuffer(read)) return fail(file, [{ line: 1, col: 1, message: tooBig(read.size) }]);
    if (read.length >= 2 && ((read[0] === 0xff && read[1] === 0xfe) || (read[0] === 0xfe && read[1] === 0xff))) {
      return fail(file, [
        {
          line: 1,
          col: 1,
          message:
            "the file is UTF-16 (it starts with a UTF-16 byte-order mark; PowerShell 5's > writes it); save the file as UTF-8",
        },
      ]);
    }
    const decoded = decodeUtf8(read);
    if (typeof decoded !== 'string') return fail(file, [{ ...decoded, message: NOT_UTF8 }]);
    text = decoded;
  } catch (err) {
    return fail(file, [{ line: 1, col: 1, message: readError(err) }]);
  }
  return parseMetricsConfig(text, file);
}

/** Validates metrics.yaml text; `file` is used in problems and (resolved) as `config.file`. */
export function parseMetricsConfig(text: string, file: string): LoadResult {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_CONFIG_BYTES) return fail(file, [{ line: 1, col: 1, message: tooBig(bytes) }]);
  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const message =
      parsed.expansion !== undefined
        ? `YAML alias "*${parsed.expansion.alias}" brings in ${parsed.expansion.nodes} nodes, and all aliases together more than ${MAX_ALIAS_EXPANSION} (a file of nested aliases, an "alias bomb", would exhaust memory); write the lists out, and keep anchors for names and small mappings`
        : parsed.alias !== null
          ? `undefined alias "*${parsed.alias}": no anchor &${parsed.alias} is defined above it; declare it in the top-level dimensions list (e.g. - &${parsed.alias} "Name") or fix the spelling`
          : `YAML syntax error: ${parsed.reason}; the file must be valid YAML`;
    return fail(file, [{ ...parsed.pos, message }]);
  }
  if (parsed.value === undefined || parsed.value === null) {
    const message =
      "the file is empty (no YAML document); declare ts_metrics: and/or model_metrics: (start from the repo's metrics.yaml)";
    return fail(file, [{ line: 1, col: 1, message }]);
  }
  const duplicates: Finding[] = parsed.duplicates.map((d) => ({
    ...d.pos,
    message: `${whereOf(parsed.value, d.path)}: key "${d.key}" is given twice in this mapping (first at line ${d.firstLine}), and YAML keeps one; remove one`,
  }));
  return check(parsed.value, file === '' ? '' : path.resolve(file), file, parsed.locator, true, duplicates);
}

/** Validates a config given as a plain JS object (tests, programmatic use); positions are 0:0. */
export function buildMetricsConfig(doc: unknown, file = ''): LoadResult {
  const none: Locator = { value: () => ({ line: 0, col: 0 }), key: () => ({ line: 0, col: 0 }) };
  return check(doc, file, file, none, false);
}

/** `FILE:LINE:COL: message` (or `FILE: message` for a problem without a position). */
export function formatProblem(p: ConfigProblem): string {
  const file = p.file === '' ? '<config>' : p.file;
  return p.line > 0 ? `${file}:${p.line}:${p.col}: ${p.message}` : `${file}: ${p.message}`;
}

function check(
  doc: unknown,
  configFile: string,
  shownFile: string,
  loc: Locator,
  withPos = true,
  parsed: readonly Finding[] = [],
): LoadResult {
  const findings = [...parsed, ...schemaFindings(doc, loc), ...ruleFindings(doc, loc), ...selfFindings(doc, loc)];
  if (findings.length > 0 || !isRecord(doc)) return fail(shownFile, findings);
  const config = normalize(doc, configFile, (p) => (withPos ? loc.value(p) : null));
  return { ok: true, config: deepFreeze(config) };
}

/** How the file's `tsserve_metrics` section departs from the built-in one (none without the section). */
function selfFindings(doc: unknown, loc: Locator): Finding[] {
  if (!hasSelfSection(doc)) return [];
  try {
    return selfSectionFindings(doc, loc, selfMetricSpecs());
  } catch (err) {
    const pos = loc.key([SELF_SECTION]);
    return [
      {
        ...pos,
        message: `${SELF_SECTION}: cannot check it against the built-in self-metrics: ${(err as Error).message}`,
      },
    ];
  }
}

/** Most problems listed for one file; the rest are counted in one last line. */
export const MAX_PROBLEMS = 100;

function fail(file: string, findings: readonly Finding[]): LoadResult {
  const seen = new Set<string>();
  const problems: ConfigProblem[] = [];
  // Stable sort: file order, and generation order for problems at the same spot.
  const sorted = [...findings].sort((a, b) => a.line - b.line || a.col - b.col);
  let more = 0;
  for (const f of sorted) {
    const key = `${f.line}:${f.col}:${f.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (problems.length < MAX_PROBLEMS) problems.push({ file, line: f.line, col: f.col, message: oneLine(f.message) });
    else if (more++ === 0) problems.push({ file, line: f.line, col: f.col, message: '' });
  }
  // One closing line for the rest, at the first one left out: a list is read, not scrolled.
  if (more > 0) problems[MAX_PROBLEMS] = { ...problems[MAX_PROBLEMS]!, message: `…(${more} more problems)` };
  return { ok: false, problems: deepFreeze(problems) };
}

/** C0 and C1 controls, and the Unicode line and paragraph separators (by property: no raw control in the source). */
const CONTROL = /[\p{Cc}\u2028\u2029]/gu;
const NAMED_CONTROLS: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * A message quoting the file's own strings kept on one line: a control character is written as
 * an escape (`\n`, `\u0000`), so a name holding a newline cannot split a problem in two or
 * forge a `FILE:LINE:COL:` line of its own.
 */
function oneLine(message: string): string {
  return message.replace(CONTROL, (c) => NAMED_CONTROLS[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The file's text, or its size in bytes when it holds more than `max` (then at most `max + 1`
 * bytes are read: a log file or /dev/zero passed by mistake is not read whole); the size is
 * null for a pipe or a device, which has none.
 */
function readBounded(file: string, max: number): Buffer | { readonly size: number | null } {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    if (size > max) return { size };
    const buf = Buffer.alloc(max + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n <= max;) {
      got = fs.readSync(fd, buf, n, max + 1 - n, null);
      n += got;
    }
    // A file that grew while read, or a pipe or a device (no size of its own).
    return n > max ? { size: size > max ? size : null } : buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

const NOT_UTF8 = 'the file is not valid UTF-8: the byte here is not (Latin-1 or Windows-1252?); save the file as UTF-8';

/**
 * The bytes as text, or where the first byte that is not UTF-8 sits: decoded leniently, an `é`
 * saved as Latin-1 became U+FFFD and was served in a # HELP line without a word.
 */
function decodeUtf8(bytes: Buffer): string | SourcePos {
  // The byte-order mark stays in the text, as readFileSync kept it (positions skip it).
  const strict = (): TextDecoder => new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  try {
    return strict().decode(bytes);
  } catch {
    // A prefix that ends inside a character decodes in stream mode, so "decodes" holds for every
    // prefix up to the first bad byte and for none after: search for the longest.
    let lo = 0;
    let hi = bytes.length;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      try {
        strict().decode(bytes.subarray(0, mid), { stream: true });
        lo = mid;
      } catch {
        hi = mid - 1;
      }
    }
    // Complete characters only: a lead byte cut off by the bad one is where the problem is.
    const before = strict().decode(bytes.subarray(0, lo), { stream: true });
    // Lines as YAML breaks them: LF, CRLF or a lone CR.
    const lines = before.split(/\r\n|\r|\n/);
    const last = lines[lines.length - 1] as string;
    const bom = lines.length === 1 && last.charCodeAt(0) === 0xfeff ? 1 : 0;
    return { line: lines.length, col: last.length + 1 - bom };
  }
}

function tooBig(bytes: number | null): string {
  const hint = 'declare the metrics you record, not one per value (a dimension tells series apart)';
  return bytes === null
    ? `the file holds more than ${MAX_CONFIG_BYTES} bytes (1 MiB), the most a metrics.yaml may be: ${hint}`
    : `the file is ${bytes} bytes; a metrics.yaml may be at most ${MAX_CONFIG_BYTES} (1 MiB): ${hint}`;
}

function readError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'cannot read the file: no such file; check the path (or pass --metrics-config FILE)';
  if (code === 'EISDIR') return 'cannot read the file: it is a directory; pass the path of a metrics.yaml file';
  if (code === 'EACCES' || code === 'EPERM')
    return 'cannot read the file: permission denied; make it readable by the server user';
  return `cannot read the file: ${(err as Error).message}`;
}
