/**
 * The metric lifecycle, Kubernetes' way (its metrics stability framework): a metric declared
 * `deprecated: {since: "X.Y", replacement: NAME}` says so first in its HELP; it is still shown in
 * X.Y and X.(Y+1), then hidden (not exposed, not logged, not sent) unless the operator passes
 * `--show-hidden-metrics-for-version` naming the previous minor version, which shows what that
 * version showed — one more minor version to migrate dashboards. `hidden_since: "X.Y"` hides it
 * earlier (vLLM's policy: hidden the version after; the vLLM profile's `vllm:gpu_cache_usage_perc`
 * is hidden in the version that deprecates it). `hidden: true` hides a metric
 * outright. Decided once, before the caches are built: both sides get the resolved config.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Deprecation, MetricSpec, MetricsConfig } from '../types.js';
import { deepFreeze } from './freeze.js';

/** A `major.minor` version; a patch part is ignored. */
export interface MinorVersion {
  readonly major: number;
  readonly minor: number;
}

/** What the server is and what the operator asked to see. */
export interface StabilityOptions {
  /** The server's version (`package.json`'s, e.g. `0.1.0`); injectable for tests. */
  readonly version: string;
  /** `--show-hidden-metrics-for-version X.Y`; must be the previous minor version. */
  readonly showHiddenForVersion?: string | null;
}

/** A metric's state at a version. */
export type MetricState = 'stable' | 'deprecated' | 'hidden';

/** `X.Y` or `X.Y.Z` (digits only) → its minor version, else null. */
export function parseMinorVersion(v: string): MinorVersion | null {
  const m = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))?$/.exec(v.trim());
  return m === null ? null : { major: Number(m[1]), minor: Number(m[2]) };
}

function show(v: MinorVersion): string {
  return `${v.major}.${v.minor}`;
}

/** The notice HELP starts with: `(Deprecated since 0.1, use NewName instead)`. */
export function deprecationNotice(d: Deprecation): string {
  if (d.since === null) return d.note === null || d.note === '' ? '(Deprecated)' : `(Deprecated: ${d.note})`;
  return d.replacement === null
    ? `(Deprecated since ${d.since})`
    : `(Deprecated since ${d.since}, use ${d.replacement} instead)`;
}

/** `help` with the deprecation notice first (unchanged without one). */
export function withNotice(help: string, d: Deprecation | null | undefined): string {
  return d === null || d === undefined ? help : `${deprecationNotice(d)} ${help}`;
}

/**
 * Why `flag` cannot be the value of `--show-hidden-metrics-for-version` for server `version`,
 * or null when it can. As in Kubernetes, only the previous minor version is accepted.
 */
export function showHiddenProblem(version: string, flag: string): string | null {
  const current = parseMinorVersion(version);
  if (current === null) return `the server version "${version}" is not X.Y.Z`;
  const prev = current.minor > 0 ? `${current.major}.${current.minor - 1}` : null;
  const wanted = parseMinorVersion(flag);
  const only =
    prev === null
      ? `tsserve ${show(current)} has no previous minor version to show hidden metrics for`
      : `only ${prev}, the previous minor version of tsserve ${show(current)}, is accepted`;
  if (wanted === null || !/^\d+\.\d+$/.test(flag.trim()))
    return `--show-hidden-metrics-for-version: "${flag}" is not a version X.Y; ${only}`;
  if (prev === null || show(wanted) !== prev)
    return `--show-hidden-metrics-for-version: ${flag.trim()} is not accepted; ${only}`;
  return null;
}

/** Minor versions from `a` to `b` (positive when `b` is later; a major step counts as far). */
function minorsBetween(a: MinorVersion, b: MinorVersion): number {
  if (a.major !== b.major) return b.major > a.major ? Infinity : -Infinity;
  return b.minor - a.minor;
}

/**
 * Whether a deprecation is past its grace at `at`: shown in `since` and the next minor only, or
 * up to the minor before `hiddenSince` when one is declared (vLLM hides the version after).
 */
function expired(d: Deprecation | null | undefined, at: MinorVersion): boolean {
  const since = d?.since === null || d?.since === undefined ? null : parseMinorVersion(d.since);
  if (since === null) return false;
  const hide = d?.hiddenSince === undefined ? null : parseMinorVersion(d.hiddenSince);
  return hide !== null ? minorsBetween(hide, at) >= 0 : minorsBetween(since, at) > 1;
}

/**
 * The state of `spec` at `version`, with `showHidden` (already validated) showing what that
 * version showed. An unparsable version hides nothing by age.
 */
export function metricState(spec: MetricSpec, version: string, showHidden: string | null = null): MetricState {
  if (spec.hidden === true) return 'hidden';
  const d = spec.deprecated;
  if (d === null || d === undefined) return 'stable';
  const at = parseMinorVersion(version);
  if (at !== null && expired(d, at)) {
    const shownAt = showHidden === null ? null : parseMinorVersion(showHidden);
    return shownAt !== null && !expired(d, shownAt) ? 'deprecated' : 'hidden';
  }
  return 'deprecated';
}

/**
 * The config the caches are built from: each spec's `hidden` set to its state at the version.
 * A `showHiddenForVersion` that `showHiddenProblem` refuses is ignored (callers check it first).
 */
export function resolveStability(config: MetricsConfig, opts: StabilityOptions): MetricsConfig {
  const flag = opts.showHiddenForVersion ?? null;
  const showHidden = flag !== null && showHiddenProblem(opts.version, flag) === null ? flag : null;
  let changed = false;
  const metrics = config.metrics.map((m) => {
    const hidden = metricState(m, opts.version, showHidden) === 'hidden';
    if (hidden === (m.hidden === true)) return m;
    changed = true;
    return { ...m, hidden };
  });
  return changed ? deepFreeze({ ...config, metrics }) : config;
}

/**
 * One line naming the deprecated metrics still shown and the hidden ones, for the start-up log;
 * null when there are none. `config` is a resolved one.
 */
export function stabilitySummary(config: MetricsConfig): string | null {
  const shown: string[] = [];
  const hidden: string[] = [];
  for (const m of config.metrics) {
    if (m.hidden === true) hidden.push(m.name);
    else if (m.deprecated !== null && m.deprecated !== undefined)
      shown.push(`${m.name} ${deprecationNotice(m.deprecated)}`);
  }
  if (shown.length === 0 && hidden.length === 0) return null;
  const parts: string[] = [];
  if (shown.length > 0) parts.push(`deprecated metrics in use: ${shown.join(', ')}`);
  if (hidden.length > 0) parts.push(`hidden metrics (not exposed, logged or sent): ${hidden.join(', ')}`);
  return `metrics: ${parts.join('; ')}`;
}

/** The server's version, from the repo's package.json (this file runs from dist/schema/config). */
export function packageVersion(): string {
  const file = resolve(import.meta.dirname, '..', '..', '..', 'package.json');
  const pkg = JSON.parse(readFileSync(file, 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}
