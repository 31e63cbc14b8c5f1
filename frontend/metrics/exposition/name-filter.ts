/**
 * What the names of `GET /metrics?name[]=` select. prometheus_client and client_java take each
 * name as a *sample* name (`x_bucket`, `x_count`, `requests_total`), so a scraper or a script
 * written for them asks for those; TorchServe's users ask for family names. Both are taken: a
 * family name selects the whole family, a sample name of a histogram only those samples, and a
 * counter's OpenMetrics names (family without `_total`, sample with it) the counter.
 */

/** The family types a name is resolved against (prom-client's `summary` and `untyped` too). */
export type FamilyType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

/** One family to render: whole (`samples` null) or only the samples of these names. */
export interface FamilySelection {
  readonly family: string;
  samples: Set<string> | null;
}

/** Sample suffixes of the families whose samples are not all of one name. */
const PART_SUFFIXES: readonly string[] = ['_bucket', '_sum', '_count'];

/** The family `name` refers to, and the sample it names (null: the whole family), or null. */
function resolve(name: string, typeOf: (family: string) => FamilyType | undefined): FamilySelection | null {
  if (typeOf(name) !== undefined) return { family: name, samples: null };
  // Counters have one kind of sample, so their OpenMetrics names stand for the whole family.
  if (name.endsWith('_total') && typeOf(name.slice(0, -'_total'.length)) === 'counter')
    return { family: name.slice(0, -'_total'.length), samples: null };
  if (typeOf(name + '_total') === 'counter') return { family: name + '_total', samples: null };
  for (const suffix of PART_SUFFIXES) {
    if (!name.endsWith(suffix)) continue;
    const family = name.slice(0, -suffix.length);
    const type = typeOf(family);
    if (type === 'histogram' || (type === 'summary' && suffix !== '_bucket'))
      return { family, samples: new Set([name]) };
  }
  return null;
}

/**
 * The families `names` select, each once, in the order of its first name; unknown names select
 * nothing. A family asked for by name and by a sample name is rendered whole.
 */
export function selectFamilies(
  names: Iterable<string>,
  typeOf: (family: string) => FamilyType | undefined,
): FamilySelection[] {
  const out = new Map<string, FamilySelection>();
  for (const name of names) {
    const sel = resolve(name, typeOf);
    if (sel === null) continue;
    const seen = out.get(sel.family);
    if (seen === undefined) out.set(sel.family, sel);
    else if (seen.samples !== null) {
      if (sel.samples === null) seen.samples = null;
      else for (const s of sel.samples) seen.samples.add(s);
    }
  }
  return [...out.values()];
}

/**
 * A rendered family block with only its `#` lines and the sample lines named in `samples`
 * (each sample is one line: label values escape their newlines).
 */
export function keepSamples(block: string, samples: ReadonlySet<string>): string {
  const kept: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('#')) kept.push(line);
    else {
      const end = line.search(/[{ ]/);
      if (samples.has(end < 0 ? line : line.slice(0, end))) kept.push(line);
    }
  }
  return kept.join('\n');
}
