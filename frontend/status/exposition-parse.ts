/**
 * Reads the Prometheus text exposition the server itself renders back into samples, so the
 * status page shows the very numbers `/metrics` shows (one source: the metric cells). Only what
 * the page needs: `name{labels} value` lines, label values unescaped; comments skipped. Bounded:
 * at most `maxSamples` samples are read.
 */

/** One sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const LABEL_RE = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

function unescape(v: string): string {
  return v.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
}

/** The samples of `text`, at most `maxSamples` of them (the rest are left out). */
export function parseExposition(text: string, maxSamples = 100_000): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (out.length >= maxSamples) break;
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.lastIndexOf(' ');
    if (space <= 0) continue;
    const name = brace === -1 || brace > space ? line.slice(0, space) : line.slice(0, brace);
    const labels: Record<string, string> = {};
    if (brace !== -1 && brace < space) {
      const block = line.slice(brace + 1, line.lastIndexOf('}'));
      for (const m of block.matchAll(LABEL_RE)) labels[m[1]!] = unescape(m[2]!);
    }
    const value = Number(line.slice(space + 1));
    if (Number.isNaN(value) && line.slice(space + 1) !== 'NaN') continue;
    out.push({ name, labels, value });
  }
  return out;
}

/** The sum of the samples named `name` whose labels include every pair of `match`. */
export function sumOf(samples: readonly Sample[], name: string, match: Readonly<Record<string, string>> = {}): number {
  let s = 0;
  for (const x of samples) {
    if (x.name !== name) continue;
    let ok = true;
    for (const k in match)
      if (x.labels[k] !== match[k]) {
        ok = false;
        break;
      }
    if (ok) s += x.value;
  }
  return s;
}

/**
 * A histogram's cumulative bucket counts summed over its series matching `match`, by upper
 * bound (ascending, +Inf last): what a quantile over all of them is read from.
 */
export function bucketsOf(
  samples: readonly Sample[],
  family: string,
  match: Readonly<Record<string, string>> = {},
): Array<[le: number, count: number]> {
  const by = new Map<number, number>();
  const name = family + '_bucket';
  for (const x of samples) {
    if (x.name !== name || x.labels.le === undefined) continue;
    let ok = true;
    for (const k in match)
      if (x.labels[k] !== match[k]) {
        ok = false;
        break;
      }
    if (!ok) continue;
    const le = x.labels.le === '+Inf' ? Infinity : Number(x.labels.le);
    by.set(le, (by.get(le) ?? 0) + x.value);
  }
  return [...by].sort((a, b) => a[0] - b[0]);
}

/**
 * The q-quantile of cumulative buckets (Prometheus's histogram_quantile: linear within the
 * bucket, the highest finite bound when it falls in +Inf); null when there are no observations.
 */
export function quantile(q: number, buckets: ReadonlyArray<readonly [number, number]>): number | null {
  if (buckets.length === 0) return null;
  const total = buckets[buckets.length - 1]![1];
  if (!(total > 0)) return null;
  const rank = q * total;
  let prevLe = 0;
  let prevCount = 0;
  for (const [le, count] of buckets) {
    if (count >= rank) {
      if (le === Infinity) return prevLe;
      const inBucket = count - prevCount;
      return inBucket <= 0 ? le : prevLe + ((le - prevLe) * (rank - prevCount)) / inBucket;
    }
    prevLe = le === Infinity ? prevLe : le;
    prevCount = count;
  }
  return prevLe;
}

/** Cumulative buckets minus an earlier reading of the same (what was observed in between). */
export function bucketDelta(
  now: ReadonlyArray<readonly [number, number]>,
  before: ReadonlyArray<readonly [number, number]>,
): Array<[number, number]> {
  const old = new Map(before.map(([le, c]) => [le, c]));
  return now.map(([le, c]) => [le, Math.max(0, c - (old.get(le) ?? 0))]);
}
