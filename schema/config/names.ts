/** The naming rules metrics.yaml shares with Prometheus, plus our reserved prefix. */

/** Prometheus metric name grammar. */
export const METRIC_NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Prometheus label name grammar; `__` prefixes are reserved for Prometheus itself. */
export const LABEL_NAME_RE = /^(?!__)[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Metric names with this prefix belong to the pipeline's own self-metrics. */
export const RESERVED_PREFIX = 'tsserve_';
/** A dimension carrying the hostname: matched case-insensitively, as TorchServe writes both. */
export const HOSTNAME_RE = /^hostname$/i;

/** A valid name close to `bad` (invalid characters become `_`), to suggest in a message. */
export function suggestName(bad: string, label: boolean): string {
  let s = bad.replace(label ? /[^a-zA-Z0-9_]/g : /[^a-zA-Z0-9_:]/g, '_');
  if (label) s = s.replace(/^_+/, (m) => (m.length >= 2 ? '' : m));
  if (s === '' || /^[0-9]/.test(s)) s = `_${s}`;
  return s;
}
