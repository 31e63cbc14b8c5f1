/** The naming rules metrics.yaml shares with Prometheus, plus our reserved prefix. */

/** Prometheus metric name grammar. */
export const METRIC_NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Prometheus label name grammar; `__` prefixes are reserved for Prometheus itself. */
export const LABEL_NAME_RE = /^(?!__)[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Metric names with this prefix belong to the pipeline's own self-metrics. */
export const RESERVED_PREFIX = 'tsserve_';
/**
 * Longest metric or dimension name (characters). Prometheus sets none, but every sample line,
 * log line and StatsD packet repeats the name, and the worker keys its tables by it.
 */
export const MAX_NAME_CHARS = 256;
/** A dimension carrying the hostname: matched case-insensitively, as TorchServe writes both. */
export const HOSTNAME_RE = /^hostname$/i;

/**
 * A valid name close to `bad` (invalid characters become `_`), to suggest in a message. A metric
 * name suggested is one the loader accepts: not `__…` (Prometheus') nor `tsserve_…` (ours), and
 * `my_metric` when nothing of `bad` is left (`名前` gave `__`, `é_rate` `__rate`, `tsserve-x` `tsserve_x`);
 * a label name gets '' then (no suggestion: `é` gave `_`).
 */
export function suggestName(bad: string, label: boolean): string {
  let s = bad.replace(label ? /[^a-zA-Z0-9_]/g : /[^a-zA-Z0-9_:]/g, '_');
  // Until nothing changes: one reserved start removed can uncover another (`tsserve-__x`, `__tsserve_x`).
  for (let prev = ''; prev !== s;) {
    prev = s;
    s = s.replace(/^_+/, (m) => (m.length >= 2 ? '' : m));
    if (!label && s.startsWith(RESERVED_PREFIX)) s = s.slice(RESERVED_PREFIX.length);
  }
  // Nothing of `bad` left to keep (a label then gets no suggestion: '' is not a valid name).
  if (!/[a-zA-Z0-9]/.test(s)) return label ? '' : 'my_metric';
  if (/^[0-9]/.test(s)) s = `_${s}`;
  return s;
}

/**
 * Whether `b` names the same dimensions as `a` in any order: a list of as many names, each in
 * `a`, none twice. The one test of "same dimension names" (the worker's addMetric, the ingest).
 */
export function sameNameSet(a: readonly string[], b: unknown): boolean {
  if (!Array.isArray(b) || a.length !== b.length) return false;
  const set = new Set(a);
  for (const n of b as readonly unknown[]) if (!set.has(n as string)) return false;
  return new Set(b).size === b.length;
}
