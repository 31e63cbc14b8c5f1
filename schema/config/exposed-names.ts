/**
 * The names a metric takes in the Prometheus exposition (text 0.0.4 and OpenMetrics): a
 * histogram's `_bucket`, `_sum` and `_count` series, a counter's OpenMetrics family (without
 * `_total`) and sample (with it). Two metrics claiming one of these names make a scrape fail
 * (promtool: "second HELP line for metric name"), so the loader and the auto-detection refuse it.
 */
import type { MetricType } from '../types.js';

/** One name a metric's exposition uses, and what it is there. */
export interface ExposedName {
  readonly name: string;
  /** `the name`, `the _count series`, `the OpenMetrics family name`… */
  readonly role: string;
}

/** Every name `name` of `type` takes in either exposition format, its own name first. */
export function exposedNames(name: string, type: MetricType): ExposedName[] {
  const out: ExposedName[] = [{ name, role: 'the name' }];
  if (type === 'histogram') {
    for (const s of ['_bucket', '_sum', '_count']) out.push({ name: name + s, role: `the ${s} series` });
  } else if (type === 'counter') {
    const family = name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
    if (family !== name) out.push({ name: family, role: 'the OpenMetrics family name' });
    else out.push({ name: name + '_total', role: 'the OpenMetrics _total series' });
  }
  return out;
}

/** Who already claims an exposed name: the metric, its type and where it is declared. */
export interface ExposedOwner {
  readonly metric: string;
  readonly type: MetricType;
  readonly role: string;
  /** `(line 8)`-style suffix, or ''. */
  readonly at: string;
}

/**
 * Each clash of `name`'s exposed names with `owners` (names claimed by other metrics), one per
 * other metric, as messages without the "where" lead. A metric never clashes with itself
 * (`self`, its name by default; null for a family from elsewhere, which clashes even by name).
 */
export function exposureClashes(
  name: string,
  type: MetricType,
  owners: ReadonlyMap<string, ExposedOwner>,
  self: string | null = name,
): string[] {
  const out: string[] = [];
  const named = new Set<string>();
  for (const mine of exposedNames(name, type)) {
    const o = owners.get(mine.name);
    // One message per other metric: `Foo` and `Foo_total` clash twice (name and family), one fix.
    if (o === undefined || o.metric === self || named.has(o.metric)) continue;
    named.add(o.metric);
    const what =
      mine.role === 'the name' ? `its name "${mine.name}"` : `${mine.role.replace(/^the /, 'its ')} "${mine.name}"`;
    out.push(
      `${what} is also ${o.role} of ${o.type} "${o.metric}"${o.at} in the Prometheus exposition, where a scrape fails on a name two families claim; rename one of them`,
    );
  }
  return out;
}

/** Adds `name`'s exposed names to `owners` (a name already claimed keeps its first owner). */
export function claimExposedNames(name: string, type: MetricType, at: string, owners: Map<string, ExposedOwner>): void {
  for (const e of exposedNames(name, type)) {
    if (!owners.has(e.name)) owners.set(e.name, { metric: name, type, role: e.role, at });
  }
}
